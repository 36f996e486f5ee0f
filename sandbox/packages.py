"""`tether sandbox build --packages`: Debian packages added to an image by apt-get, run through the egress proxy.

The install is one step of the networked builder (`build_steps.run_step`): a
container of the base image in network `none`, apt-get under the egress
forwarder, the proxy open only to the hosts the caller grants (the image's apt
sources and `[network] allow`). The result keeps the base's USER, WORKDIR and
CMD, is labelled `tether.extra-packages` with what was added, and is tagged.
Names are checked against Debian policy before anything runs; nothing is pulled.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tether.sandbox import apt_sources, cleanup
from tether.sandbox.build_steps import BuildState, from_base, image_changes, run_step
from tether.sandbox.errors import ImageMissingError, SandboxError

if TYPE_CHECKING:
    import docker

    from tether.sandbox.egress import ConnectionRecord
    from tether.sandbox.network import SandboxNetwork

NAME = re.compile(r"[a-z0-9][a-z0-9+.-]+")
"""Debian policy 5.6.7: lower-case letters, digits, `+ - .`; two characters at least, starting alphanumeric."""
VERSION = re.compile(r"(?:[0-9]+:)?[0-9][A-Za-z0-9.+~]*(?:-[A-Za-z0-9.+~-]*[A-Za-z0-9.+~])?")
"""Debian policy 5.6.12: `[epoch:]upstream[-revision]`, upstream starting with a digit."""
MAX_PACKAGES = 200
MAX_LENGTH = 200
LABEL = "tether.extra-packages"
INSTALL = """set -e
unset no_proxy NO_PROXY
export DEBIAN_FRONTEND=noninteractive
o="-o Acquire::http::Proxy=$http_proxy -o Acquire::https::Proxy=$https_proxy -o Acquire::Retries=0 \
-o Acquire::http::Timeout=30 -o Acquire::https::Timeout=30 -o Acquire::http::Pipeline-Depth=0 \
-o Dpkg::Use-Pty=0 -o APT::Update::Error-Mode=any"
apt-get $o -q update
apt-get $o -q -y --no-install-recommends install "$@"
apt-get clean
rm -rf /var/lib/apt/lists/*
"""
"""Run as root with the package names as arguments; apt reaches every source through the forwarder (no NO_PROXY:
the proxy decides, and records, even for a source on loopback)."""


@dataclass
class PackagesResult:
    """What an install did."""

    image_id: str
    packages: list[str]
    hosts: list[str]
    """What the proxy was opened to."""
    records: list[ConnectionRecord] = field(default_factory=list)
    seconds: float = 0.0


def parse_names(values: Iterable[str]) -> list[str]:
    """Package names (`NAME` or `NAME=VERSION`; commas and spaces separate them), deduplicated in order.

    Raises:
        SandboxError: a name or version Debian policy does not allow (apt options, paths, globs, `:arch`, `/suite`).
    """
    names: list[str] = []
    for value in values:
        for word in re.split(r"[\s,]+", value.strip()):
            if not word:
                continue
            name, eq, version = word.partition("=")
            if (len(word) > MAX_LENGTH or not NAME.fullmatch(name) or (eq and not VERSION.fullmatch(version))):
                shown = json.dumps(word[:80])
                msg = (f"--packages {shown} is not a Debian package name: lower-case letters, digits, + - . "
                       "(two or more, starting with a letter or digit), optionally =VERSION "
                       "(`curl`, `libssl3=3.0.11-1`)")
                raise SandboxError(msg)
            if word not in names:
                names.append(word)
    if not names:
        msg = "--packages needs at least one package name (`--packages curl jq`)"
        raise SandboxError(msg)
    if len(names) > MAX_PACKAGES:
        msg = f"--packages names {len(names)} packages; at most {MAX_PACKAGES} at once"
        raise SandboxError(msg)
    return names


def base_sources(client: docker.DockerClient, base: str, missing_fix: str) -> apt_sources.AptSources:
    """The apt sources of the base image, which must be present locally (it is never pulled).

    Raises:
        ImageMissingError: the base is absent (`missing_fix` says how to make it). SandboxError: no /etc/apt.
    """
    from tether.sandbox.engine import docker_sdk

    try:
        client.images.get(base)
    except docker_sdk().errors.ImageNotFound as e:
        msg = f"the image {base} is not present locally; {missing_fix}"
        raise ImageMissingError(msg) from e
    return apt_sources.read_image_sources(client, base)


def install(client: docker.DockerClient, base: str, tag: str, packages: list[str], network: SandboxNetwork,
            hosts: list[str], *, timeout_s: float = 1800.0) -> PackagesResult:
    """Add `packages` to `base` with apt-get through the proxy open to `hosts`; tag the result `tag`.

    The same file lock as `tether sandbox build` keeps one build of a tag at a time (two installs into the
    default image do not lose each other's packages).

    Raises:
        SandboxError: no python3 in the base (the forwarder needs it), apt-get failed (its output's tail named).
    """
    from filelock import FileLock

    from tether.sandbox.images import build_lock

    with FileLock(str(build_lock(tag))):
        return _install(client, base, tag, packages, network, hosts, timeout_s)


def _install(client: docker.DockerClient, base: str, tag: str, packages: list[str], network: SandboxNetwork,
             hosts: list[str], timeout_s: float) -> PackagesResult:
    start = time.monotonic()
    state = BuildState(image=base)
    from_base(client, state)
    labels = cleanup.owner_labels(f"build-{tag}")  # a killed install's container: `tether sandbox gc`
    argv = ["/bin/sh", "-c", INSTALL, "sh", *packages]
    try:
        run_step(client, state, json.dumps(argv), network, hosts, start + timeout_s, labels,
                 shown=f"apt-get install {' '.join(packages)}")
    except SandboxError as e:
        refused = [r for r in state.records if not r.allowed]
        text = " | ".join(line.strip() for line in str(e).splitlines() if line.strip())
        if refused:
            r = refused[0]
            msg = (f"the egress proxy refused {r.host}:{r.port} ({r.reason}), so apt-get could not install "
                   f"{' '.join(packages)}; open it with `[network] allow` (a name) or `[network] addresses` (a "
                   f"loopback or private address), docs/network.md")
            raise SandboxError(msg) from e
        raise SandboxError(text[-900:]) from e
    before = ((client.images.get(base).attrs.get("Config") or {}).get("Labels") or {}).get(LABEL, "")
    added = " ".join(dict.fromkeys([*before.split(), *packages]))
    container = client.containers.create(state.image, entrypoint=[], command=["true"], network_mode="none",
                                         labels=labels)
    try:
        image_id = container.commit(changes=[f'LABEL {LABEL}="{added}"', *image_changes(state)]).id
    finally:
        container.remove(force=True)
    repo, _, version = tag.rpartition(":") if ":" in tag.rsplit("/", 1)[-1] else (tag, "", "latest")
    if not client.images.get(image_id).tag(repo, version):
        msg = f"tagging the image as {tag} failed"
        raise SandboxError(msg)
    return PackagesResult(image_id=image_id, packages=packages, hosts=hosts, records=state.records,
                          seconds=time.monotonic() - start)
