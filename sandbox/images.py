"""Sandbox images: build them locally without a registry, and find them at start.

Parts: `build_image()` (what `tether sandbox build` runs; idempotent, `force`
rebuilds), `ensure_image()` (used when a sandbox starts: local image as is,
otherwise a pull only when the registry answers, otherwise ImageMissingError
naming the build command), and the tags `DEBIAN_TAG` and `TINY_TAG`.
"""

from __future__ import annotations

import socket
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from filelock import FileLock
from pydantic import BaseModel

from tether.sandbox import rootfs
from tether.sandbox.errors import ImageMissingError, SandboxError

if TYPE_CHECKING:
    import docker

DEBIAN_TAG = "tether-sandbox:debian"
TINY_TAG = "tether-sandbox:tiny"
LOCAL_REPO = "tether-sandbox"
DEBIAN_SUITE = "bookworm"
DEBIAN_MIRROR = "http://deb.debian.org/debian"
REGISTRY_PROBE_S = 1.0

Flavor = Literal["debian", "tiny"]


class BuildResult(BaseModel):
    """What `build_image` did."""

    tag: str
    built: bool
    """False when the image already existed and nothing was rebuilt."""
    seconds: float
    image_id: str


def tools_label() -> str:
    """The Debian image's label naming what was installed: an image built from another list is rebuilt."""
    return ",".join((*rootfs.DEBIAN_PACKAGES, *rootfs.DEBIAN_TOOLS))


def _changes(path: str, tools: str = "") -> list[str]:
    return [
        f"ENV PATH={path}",
        "ENV HOME=/tmp",
        "ENV LANG=C.UTF-8",
        "WORKDIR /home/tether/workspace",
        f"USER {rootfs.SANDBOX_UID}:{rootfs.SANDBOX_UID}",
        'CMD ["sleep", "infinity"]',
        "LABEL tether.image=1",
        *([f"LABEL tether.packages={tools}"] if tools else []),
    ]


def _existing(client: docker.DockerClient, tag: str) -> str | None:
    from tether.sandbox.engine import docker_sdk

    try:
        return client.images.get(tag).id
    except docker_sdk().errors.ImageNotFound:
        return None


def stale(client: docker.DockerClient, tag: str) -> bool:
    """Whether the Debian image `tag` was built from another package list than `tools_label()` (or none)."""
    labels = (client.images.get(tag).attrs.get("Config") or {}).get("Labels") or {}
    return labels.get("tether.packages") != tools_label()


def build_lock(tag: str) -> Path:
    """The file lock that keeps builds of one tag (debootstrap, `--packages`) to one at a time."""
    return Path(tempfile.gettempdir()) / f"tether-build-{tag.replace('/', '_').replace(':', '_')}.lock"


def build_image(
    client: docker.DockerClient,
    flavor: Flavor = "debian",
    *,
    force: bool = False,
    tag: str | None = None,
) -> BuildResult:
    """Build a sandbox image unless it exists (a Debian image built from another package list is rebuilt); a file
    lock keeps parallel builds to one.

    Raises:
        ConfigError: missing host tools, or not root for the Debian build.
        SandboxError: debootstrap or the import failed.
    """
    tag = tag or (DEBIAN_TAG if flavor == "debian" else TINY_TAG)
    start = time.monotonic()
    with FileLock(str(build_lock(tag))):
        found = _existing(client, tag)
        if found and not force and not (flavor == "debian" and stale(client, tag)):
            return BuildResult(tag=tag, built=False, seconds=time.monotonic() - start, image_id=found)
        repo, _, version = tag.rpartition(":")
        try:
            if flavor == "tiny":
                client.api.import_image_from_data(
                    rootfs.tiny_rootfs(), repository=repo, tag=version, changes=_changes("/bin:/usr/bin")
                )
            else:
                with rootfs.debian_rootfs(DEBIAN_SUITE, DEBIAN_MIRROR) as tarball:
                    client.api.import_image_from_file(
                        str(tarball), repository=repo, tag=version,
                        changes=_changes("/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin", tools_label()),
                    )
        except OSError as e:
            msg = f"importing {tag} failed: {e}"
            raise SandboxError(msg) from e
        image_id = _existing(client, tag)
        if image_id is None:
            msg = f"import of {tag} reported success but the image is absent; retry with --force"
            raise SandboxError(msg)
    return BuildResult(tag=tag, built=True, seconds=time.monotonic() - start, image_id=image_id)


def registry_host(image: str) -> str:
    """The registry an image reference points at (Docker Hub when none is named)."""
    first, sep, _ = image.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return first
    return "registry-1.docker.io"


def registry_answers(image: str, timeout_s: float = REGISTRY_PROBE_S) -> bool:
    """Whether the image's registry accepts a TCP connection quickly (no HTTP is sent)."""
    host, _, port = registry_host(image).partition(":")
    try:
        with socket.create_connection((host, int(port or 443)), timeout=timeout_s):
            return True
    except OSError:
        return False


def ensure_image(client: docker.DockerClient, image: str, *, pull_missing: bool = True) -> str:
    """Return the id of `image`, pulling it only when that can work.

    Raises:
        ImageMissingError: absent locally and not pullable; the message names the fix.
    """
    found = _existing(client, image)
    if found:
        return found
    local = image.rpartition(":")[0] == LOCAL_REPO
    if image == DEBIAN_TAG:
        fix = "run `tether sandbox build`"
    elif image == TINY_TAG:
        fix = "run `tether sandbox build --tiny`"
    elif local:
        fix = f"Tether builds only {DEBIAN_TAG} and {TINY_TAG}; run `tether sandbox build` and use {DEBIAN_TAG}"
    else:
        fix = f"run `docker pull {image}` where its registry is reachable, or `tether sandbox build`"
    if local or not pull_missing or not registry_answers(image):
        msg = f"sandbox image {image} is not present locally; {fix}"
        raise ImageMissingError(msg)
    from tether.sandbox.engine import docker_sdk

    try:
        return client.images.pull(image).id
    except docker_sdk().errors.DockerException as e:
        msg = f"pulling {image} failed ({str(e).splitlines()[0]}); {fix}"
        raise ImageMissingError(msg) from e


def build_dockerfile(client: docker.DockerClient, context: Path, tag: str) -> str:
    """Build `context/Dockerfile` with the engine's builder, offline (network none, no pulls); the image id.

    Raises:
        SandboxError: the build failed (its first line, and the way to build with a network).
    """
    from tether.sandbox.engine import docker_sdk

    errors = docker_sdk().errors
    try:
        image, _ = client.images.build(path=str(context), tag=tag, pull=False, rm=True, forcerm=True,
                                       network_mode="none", labels={"tether.image": "custom"})
    except (errors.BuildError, errors.APIError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        msg = f"{context}/Dockerfile did not build offline: {first[:300]}; if it downloads, pass --build-network"
        raise SandboxError(msg) from e
    return str(image.id)
