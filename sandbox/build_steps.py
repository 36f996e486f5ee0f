"""A Dockerfile built step by step through the egress proxy (`--build-network`): no build container has a network.

The engine's builder can only give RUN steps a network of Docker's (a bridge
or the host's); this builder keeps every step in network mode `none` and runs
each RUN under the egress forwarder, so a step reaches only the hosts its
grant names. One stage, and the instructions a task image uses: FROM, RUN,
COPY and ADD (files of the build context only), ENV, ARG, WORKDIR, USER, CMD,
ENTRYPOINT, EXPOSE, LABEL. Anything else is refused with a line naming it.
Each step is a container committed into the next image; the last is tagged.
A step's container has stopped (its processes killed) and is removed before
the next step starts, so nothing a step left running sees a later step's grant.
The image keeps the base's (or the Dockerfile's) USER, WORKDIR, CMD and
ENTRYPOINT, not the step container's, and none of the owner labels that let
`tether sandbox gc` collect a killed build's step containers.
"""

from __future__ import annotations

import io
import json
import posixpath
import re
import shlex
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.sandbox import cleanup
from tether.sandbox.egress import ConnectionRecord
from tether.sandbox.errors import SandboxError
from tether.sandbox.network import SandboxNetwork

if TYPE_CHECKING:
    import docker

CONFIG_ONLY = {"ENV", "WORKDIR", "USER", "CMD", "ENTRYPOINT", "EXPOSE", "LABEL"}
_VAR = re.compile(r"\$\{(\w+)(?::-([^}]*))?\}|\$(\w+)")
HostsOf = Callable[[str], list[str]]


@dataclass
class BuildState:
    image: str
    env: dict[str, str] = field(default_factory=dict)
    args: dict[str, str] = field(default_factory=dict)
    workdir: str = "/"
    user: str = ""
    """The Dockerfile's USER: what RUN steps run as (root until it says one)."""
    image_user: str = ""
    """The image's USER: the base's, until the Dockerfile says one."""
    cmd: list[str] | None = None
    entrypoint: list[str] | None = None
    records: list[ConnectionRecord] = field(default_factory=list)


def image_changes(state: BuildState) -> list[str]:
    """Commit changes that give the next image the build's config rather than the step container's."""
    changes = [f"WORKDIR {state.workdir}", "LABEL " + " ".join(f'{key}=""' for key in cleanup.OWNER_KEYS)]
    if state.image_user:
        changes.append(f"USER {state.image_user}")
    if state.entrypoint:
        changes.append(f"ENTRYPOINT {json.dumps(state.entrypoint)}")  # resets the step container's CMD
    if state.cmd or not state.entrypoint:
        # A commit cannot leave CMD empty (the engine fills it from the container): with no CMD and no ENTRYPOINT
        # the image gets /bin/sh, never the step's own command line.
        changes.append(f"CMD {json.dumps(state.cmd or ['/bin/sh'])}")
    return changes


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, rest) for each line of a Dockerfile, continuations joined, comments dropped."""
    out: list[tuple[str, str]] = []
    buf = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not buf and (not stripped or stripped.startswith("#")):
            continue
        if stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            buf += stripped[:-1] + " "
            continue
        buf += stripped
        word, _, rest = buf.partition(" ")
        out.append((word.upper(), rest.strip()))
        buf = ""
    if buf:
        word, _, rest = buf.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def _expand(text: str, state: BuildState) -> str:
    values = {**state.args, **state.env}

    def sub(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(3)
        return values.get(name, m.group(2) or "")

    return _VAR.sub(sub, text)


def _shell_or_exec(rest: str) -> list[str]:
    """The exec form (a JSON list of strings, maybe empty: `CMD []`) or the shell form."""
    if rest.startswith("["):
        try:
            argv = json.loads(rest)
        except ValueError:
            argv = None
        if isinstance(argv, list) and all(isinstance(a, str) for a in argv):
            return argv
    return ["/bin/sh", "-c", rest]


def build(client: docker.DockerClient, context: Path, tag: str, network: SandboxNetwork, hosts_of: HostsOf,
          *, timeout_s: float = 1800.0, labels: dict[str, str] | None = None) -> tuple[str, list[ConnectionRecord]]:
    """Build `context/Dockerfile` into `tag`; (image id, every connection the RUN steps asked for).

    Raises:
        SandboxError: an unsupported instruction, a missing base image, no python3 in it, a failed step.
    """
    steps = instructions((context / "Dockerfile").read_text(encoding="utf-8", errors="replace"))
    froms = [rest for word, rest in steps if word == "FROM"]
    if len(froms) != 1:
        msg = "the networked build takes one stage (one FROM); build multi-stage Dockerfiles on a connected machine"
        raise SandboxError(msg)
    deadline = time.monotonic() + timeout_s
    state = BuildState(image="")
    labels = {**(labels or {}), **cleanup.owner_labels(f"build-{tag}")}  # a killed build's steps: `tether sandbox gc`
    for word, rest in steps:
        if time.monotonic() > deadline:
            msg = f"the build ran past its {timeout_s:.0f} s"
            raise SandboxError(msg)
        if word == "FROM":
            state.image = _expand(rest.split()[-1] if " AS " not in rest.upper() else rest.split()[0], state)
            from_base(client, state)
        elif word == "ARG":
            name, _, default = rest.partition("=")
            state.args.setdefault(name.strip(), default.strip().strip('"'))
        elif word == "RUN":
            run_step(client, state, _expand(rest, state), network, hosts_of(_expand(rest, state)), deadline, labels)
        elif word in ("COPY", "ADD"):
            _copy(client, state, context, word, _expand(rest, state), labels)
        elif word in CONFIG_ONLY:
            _config(client, state, word, _expand(rest, state), labels)
        else:
            msg = f"Dockerfile instruction {word} is not supported by the networked build; build it without " \
                  "--build-network on a connected machine"
            raise SandboxError(msg)
    client.images.get(state.image).tag(*tag.rsplit(":", 1))
    return state.image, state.records


def from_base(client: docker.DockerClient, state: BuildState) -> None:
    """Check `state.image` can be built on (present, has python3) and take its USER, WORKDIR, CMD, ENTRYPOINT."""
    _has_python(client, state.image)
    config = client.images.get(state.image).attrs.get("Config") or {}
    state.workdir = config.get("WorkingDir") or "/"
    state.image_user = config.get("User") or ""
    state.cmd, state.entrypoint = config.get("Cmd") or None, config.get("Entrypoint") or None


def _has_python(client: docker.DockerClient, image: str) -> None:
    from tether.sandbox.engine import docker_sdk

    try:
        client.images.get(image)  # never a pull: `containers.run` would pull a missing image
        out = client.containers.run(image, ["sh", "-c", "command -v python3 || echo none"], network_mode="none",
                                    remove=True, entrypoint=[], user="0")
    except docker_sdk().errors.ImageNotFound as e:
        msg = f"base image {image} is not present locally; load it (`docker load`) or pull it on a connected machine"
        raise SandboxError(msg) from e
    except docker_sdk().errors.DockerException as e:
        msg = f"base image {image} cannot run sh: {e}"
        raise SandboxError(msg) from e
    if b"none" in out:
        msg = f"base image {image} has no python3, which the egress forwarder of a networked build needs"
        raise SandboxError(msg)


def _commit(container: Any, state: BuildState, changes: list[str]) -> None:
    try:
        state.image = container.commit(changes=[*changes, *image_changes(state)]).id
    finally:
        _remove(container)


def _stop(container: Any) -> None:
    """Kill whatever still runs in a step's container and wait until the engine says it has stopped."""
    container.reload()
    if container.status in ("running", "paused", "restarting"):
        container.kill()
        container.wait(timeout=30)
        container.reload()
    if container.status in ("running", "paused", "restarting"):
        msg = f"the step container {container.short_id} did not stop; the build stops here"
        raise SandboxError(msg)


def _remove(container: Any) -> None:
    from tether.sandbox.engine import docker_sdk

    container.remove(force=True)
    try:
        container.reload()
    except docker_sdk().errors.NotFound:
        return
    msg = f"the step container {container.short_id} could not be removed; the build stops here"
    raise SandboxError(msg)


def run_step(client: docker.DockerClient, state: BuildState, rest: str, network: SandboxNetwork, hosts: list[str],
             deadline: float, labels: dict[str, str], *, shown: str = "") -> None:
    """One RUN: a container of `state.image` in network `none`, granted `hosts` through the proxy, committed.

    Raises:
        SandboxError: the step exited non-zero (its output's tail named), or its container would not stop.
    """
    argv = _shell_or_exec(rest)
    if not argv:
        msg = "RUN [] has no command"
        raise SandboxError(msg)
    with network.grant(hosts) as records:
        container = client.containers.create(
            state.image, entrypoint=[], command=network.wrap(argv), network_mode="none", environment=state.env,
            working_dir=state.workdir, user=state.user or ("0" if state.image_user else None),
            volumes=network.volume(), labels=labels)
        try:
            container.start()
            code = container.wait(timeout=max(1.0, deadline - time.monotonic())).get("StatusCode", 1)
            _stop(container)  # before the grant closes: nothing of this step outlives it
        except BaseException:
            container.remove(force=True)
            raise
    state.records.extend(records)
    if code != 0:
        tail = container.logs(tail=20).decode(errors="replace").strip()
        _remove(container)
        msg = f"{shown or 'RUN ' + rest[:120]} exited {code}: {tail[-600:]}"
        raise SandboxError(msg)
    _commit(container, state, [])


def _tar(context: Path, sources: list[str], dest: str) -> bytes:
    buf = io.BytesIO()
    root = context.resolve()
    into_dir = dest.endswith("/") or len(sources) > 1
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for src in sources:
            path = (root / src).resolve()
            if root not in (path, *path.parents) or not path.exists():
                msg = f"COPY source {src} is not a file of the build context"
                raise SandboxError(msg)
            if path.is_dir():
                for p in sorted(path.rglob("*")):
                    if p.is_symlink() or not (p.is_file() or p.is_dir()):
                        continue
                    tar.add(p, arcname=posixpath.join(dest, str(p.relative_to(path))).lstrip("/"), recursive=False)
            else:
                name = posixpath.join(dest, path.name) if into_dir else dest
                tar.add(path, arcname=name.lstrip("/"), recursive=False)
    return buf.getvalue()


def _copy(client: docker.DockerClient, state: BuildState, context: Path, word: str, rest: str,
          labels: dict[str, str]) -> None:
    words = [w for w in shlex.split(rest) if not w.startswith("--chown") and not w.startswith("--chmod")]
    if any(w.startswith("--") for w in words) or len(words) < 2 or any("://" in w for w in words):
        msg = f"{word} {rest[:80]}: only files of the build context are copied by the networked build"
        raise SandboxError(msg)
    *sources, dest = words
    dest = dest if dest.startswith("/") else posixpath.join(state.workdir, dest) + ("/" if dest.endswith("/") else "")
    container = client.containers.create(state.image, entrypoint=[], command=["true"], network_mode="none",
                                         labels=labels)
    try:
        container.put_archive("/", _tar(context, sources, dest))
    except BaseException:
        container.remove(force=True)
        raise
    _commit(container, state, [])


def _config(client: docker.DockerClient, state: BuildState, word: str, rest: str, labels: dict[str, str]) -> None:
    if word == "ENV":
        pairs = re.findall(r'(\w+)=("[^"]*"|\S+)', rest) if "=" in rest.split()[0] else \
            [(rest.split(None, 1)[0], rest.split(None, 1)[1] if " " in rest else "")]
        for k, v in pairs:
            state.env[k] = v.strip('"')
    elif word == "WORKDIR":
        state.workdir = posixpath.normpath(posixpath.join(state.workdir, rest))
    elif word == "USER":
        state.user = state.image_user = rest
    elif word == "CMD":
        state.cmd = _shell_or_exec(rest)
    elif word == "ENTRYPOINT":
        state.entrypoint, state.cmd = _shell_or_exec(rest), None  # as in docker build: ENTRYPOINT resets CMD
    container = client.containers.create(state.image, entrypoint=[], command=["true"], network_mode="none",
                                         labels=labels)
    _commit(container, state, [f"{word} {rest}"] if word in ("ENV", "EXPOSE", "LABEL") else [])
