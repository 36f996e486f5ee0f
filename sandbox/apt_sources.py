"""The hosts an image's apt reaches: read from its `/etc/apt/sources.list` and `sources.list.d/`, never by running it.

`tether sandbox build --packages` opens the egress proxy to these hosts only
(and `[network] allow`). Both source formats apt reads are parsed: one-line
(`deb [opts] URI suite comp...` in `sources.list` and `*.list`) and deb822
(`Types:`/`URIs:` stanzas in `*.sources`, `Enabled: no` skipped). Files are
taken from the image with the engine's archive API (a created, never started
container), bounded in bytes; symlinks and other files apt ignores are skipped.
"""

from __future__ import annotations

import io
import posixpath
import tarfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from tether.sandbox.errors import SandboxError

if TYPE_CHECKING:
    import docker

APT_DIR = "/etc/apt"
MAX_BYTES = 4 << 20
"""The most of `/etc/apt` read from an image; more is refused (a sources list is a few hundred bytes)."""
_PORTS = {"http": 80, "https": 443}


@dataclass
class AptSources:
    """What an image's apt sources name."""

    hosts: list[str] = field(default_factory=list)
    """`host:port` of every http(s) source, in the order found."""
    unreadable: list[str] = field(default_factory=list)
    """Sources whose host cannot be opened through the proxy (`file:`, `cdrom:`, `mirror+` lists, bad URIs)."""


def _add(found: AptSources, uri: str, where: str) -> None:
    scheme = uri.split(":", 1)[0].lower()
    if "+" in scheme:  # tor+http, mirror+http: a transport the proxy does not speak, or hosts it cannot read
        found.unreadable.append(f"{uri} ({where}): the {scheme} method is not carried by the egress proxy")
        return
    if scheme in ("file", "copy", "cdrom"):
        return  # local: no network needed
    try:
        parts = urlsplit(uri)
        port, host, userinfo = parts.port or _PORTS.get(scheme), parts.hostname, parts.username or parts.password
    except ValueError:
        host, port, userinfo = None, None, None
    if scheme not in _PORTS or not host or port is None or userinfo:
        found.unreadable.append(f"{uri} ({where}): only http:// and https:// sources are fetched through the proxy")
        return
    entry = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if entry not in found.hosts:
        found.hosts.append(entry)


def parse_one_line(text: str, where: str, found: AptSources) -> None:
    """`deb [options] URI suite [components]` lines (and `deb-src`)."""
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        kind, _, rest = line.partition(" ")
        if kind not in ("deb", "deb-src"):
            continue
        rest = rest.strip()
        if rest.startswith("["):
            close = rest.find("]")
            if close < 0:
                found.unreadable.append(f"{line} ({where}): an options bracket that does not close")
                continue
            rest = rest[close + 1:].strip()
        if rest:
            _add(found, rest.split()[0], where)


def parse_deb822(text: str, where: str, found: AptSources) -> None:
    """Stanzas of `Field: value` lines (continuations indented), separated by blank lines."""
    for stanza in text.replace("\r\n", "\n").split("\n\n"):
        fields: dict[str, str] = {}
        last = ""
        for raw in stanza.splitlines():
            if raw.startswith("#"):
                continue
            if raw[:1] in (" ", "\t") and last:
                fields[last] += " " + raw.strip()
                continue
            name, sep, value = raw.partition(":")
            if sep:
                last = name.strip().lower()
                fields[last] = value.strip()
        if not fields or fields.get("enabled", "yes").lower() == "no":
            continue
        if not {"deb", "deb-src"} & set(fields.get("types", "").split()):
            continue
        for uri in fields.get("uris", "").split():
            _add(found, uri, where)


def from_files(files: dict[str, bytes]) -> AptSources:
    """Parse `{path under /etc/apt: content}` the way apt picks its source files."""
    found = AptSources()
    for path in sorted(files):
        text = files[path].decode("utf-8", errors="replace")
        if path == "sources.list" or (path.startswith("sources.list.d/") and path.endswith(".list")):
            parse_one_line(text, path, found)
        elif path.startswith("sources.list.d/") and path.endswith(".sources"):
            parse_deb822(text, path, found)
    return found


def read_image_sources(client: docker.DockerClient, image: str) -> AptSources:
    """The apt sources of `image` (which must exist), read from its files without running anything.

    Raises:
        SandboxError: the image has no /etc/apt, or it is larger than `MAX_BYTES`.
    """
    from tether.sandbox.engine import docker_sdk

    container = client.containers.create(image, entrypoint=[], command=["true"], network_mode="none")
    try:
        stream, _ = container.get_archive(APT_DIR)
        data = bytearray()
        for chunk in stream:
            data += chunk
            if len(data) > MAX_BYTES:
                msg = f"{APT_DIR} of {image} is over {MAX_BYTES >> 20} MiB; it is not read"
                raise SandboxError(msg)
    except docker_sdk().errors.NotFound as e:
        msg = f"{image} has no {APT_DIR}: --packages adds Debian packages to a Debian image"
        raise SandboxError(msg) from e
    finally:
        container.remove(force=True)
    files: dict[str, bytes] = {}
    skipped: list[str] = []
    with tarfile.open(fileobj=io.BytesIO(bytes(data))) as tar:
        for member in tar:
            name = posixpath.normpath(member.name).split("/", 1)[-1] if "/" in member.name else ""
            if not member.isfile():
                if member.issym() and name.startswith("sources.list"):  # it could name anything in the image
                    skipped.append(f"{APT_DIR}/{name} is a symlink; it is not followed")
                continue
            fh = tar.extractfile(member)
            if name and fh is not None:
                files[name] = fh.read()
    found = from_files(files)
    found.unreadable += skipped
    return found
