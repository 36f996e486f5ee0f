"""Root filesystems for the sandbox images, made without any registry.

Parts: `tiny_rootfs()` packs /bin/busybox and /bin/bash-static into an
in-memory tarball (about a second); `debian_rootfs()` runs debootstrap
--variant=minbase against a Debian mirror, adds the test runners and build
tools with apt and packs the result (a few minutes, needs root). Both add the non-root user `tether` (uid 1000).
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tether.common.errors import ConfigError
from tether.sandbox.errors import SandboxError

BUSYBOX = Path("/bin/busybox")
BASH_STATIC = Path("/bin/bash-static")
SANDBOX_UID = 1000
PASSWD = (
    "root:x:0:0:root:/root:/bin/sh\n"
    f"tether:x:{SANDBOX_UID}:{SANDBOX_UID}:tether sandbox:/home/tether:/bin/bash\n"
    "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"
)
GROUP = f"root:x:0:\ntether:x:{SANDBOX_UID}:\nnogroup:x:65534:\n"
MOUNT_POINTS = ("workspace", "memory")
DEBIAN_PACKAGES = ("bash", "coreutils", "python3", "git", "procps", "ca-certificates")
"""What debootstrap installs itself."""
DEBIAN_TOOLS = ("python3-pytest", "make", "gcc", "libc6-dev", "nodejs", "npm", "bats")
"""The common test runners and build tools, so a project's own tests can run on both sides of the gate; installed
by apt inside the new root (debootstrap's --include cannot resolve npm's alternatives)."""


def _add_dir(tar: tarfile.TarFile, name: str, mode: int = 0o755, uid: int = 0) -> None:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.uid, info.gid = tarfile.DIRTYPE, mode, uid, uid
    tar.addfile(info)


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes, mode: int = 0o644) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), mode
    tar.addfile(info, io.BytesIO(data))


def _busybox_applets() -> list[str]:
    out = subprocess.run([str(BUSYBOX), "--list"], capture_output=True, text=True, check=True)
    return [a for a in out.stdout.split() if a and "/" not in a and a not in ("busybox", "bash")]


def tiny_rootfs() -> bytes:
    """A tarball of busybox applets plus static bash, /etc/passwd and mount points.

    Raises:
        ConfigError: /bin/busybox or /bin/bash-static is missing on the host.
    """
    for need, pkg in ((BUSYBOX, "busybox-static"), (BASH_STATIC, "bash-static")):
        if not need.is_file():
            msg = f"{need} not found; run `sudo apt-get install {pkg}`"
            raise ConfigError(msg)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for d in ("bin", "etc", "usr", "usr/bin", "proc", "sys", "dev", "root", "home", *MOUNT_POINTS):
            _add_dir(tar, d, 0o700 if d == "root" else 0o755)
        _add_dir(tar, "tmp", 0o1777)
        _add_dir(tar, "home/tether", 0o755, uid=SANDBOX_UID)
        tar.add(str(BUSYBOX), "bin/busybox")
        tar.add(str(BASH_STATIC), "bin/bash")
        for applet in _busybox_applets():
            link = tarfile.TarInfo(f"bin/{applet}")
            link.type, link.linkname, link.mode = tarfile.SYMTYPE, "busybox", 0o777
            tar.addfile(link)
        _add_bytes(tar, "etc/passwd", PASSWD.encode())
        _add_bytes(tar, "etc/group", GROUP.encode())
    return buf.getvalue()


@contextmanager
def debian_rootfs(suite: str, mirror: str) -> Iterator[Path]:
    """Yield the path of a tarball of a minimal Debian with the sandbox user.

    Raises:
        ConfigError: not root, or debootstrap is not installed.
        SandboxError: debootstrap failed (network, mirror, disk).
    """
    if os.geteuid() != 0:
        msg = "building the Debian image needs root (debootstrap); run `sudo tether sandbox build`"
        raise ConfigError(msg)
    if shutil.which("debootstrap") is None:
        msg = "debootstrap not found; run `sudo apt-get install debootstrap`"
        raise ConfigError(msg)
    with tempfile.TemporaryDirectory(prefix="tether-rootfs-") as tmp:
        root = Path(tmp) / "root"
        cmd = [
            "debootstrap", "--variant=minbase", f"--include={','.join(DEBIAN_PACKAGES)}",
            suite, str(root), mirror,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
            msg = f"debootstrap failed ({proc.returncode}): {' | '.join(tail)}; check {mirror} is reachable"
            raise SandboxError(msg)
        _apt_install(root, DEBIAN_TOOLS)
        _add_user(root)
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for entry in (root / junk).glob("*"):
                if entry.is_file():
                    entry.unlink()
        tarball = Path(tmp) / "rootfs.tar"
        subprocess.run(
            ["tar", "--numeric-owner", "-C", str(root), "-cf", str(tarball), "."], check=True
        )
        yield tarball


def _apt_install(root: Path, packages: tuple[str, ...]) -> None:
    """apt-get install `packages` inside `root` (with the host's resolver for the mirror, taken out again)."""
    resolv = root / "etc/resolv.conf"
    had = resolv.exists() or resolv.is_symlink()
    if not had and Path("/etc/resolv.conf").is_file():
        shutil.copyfile("/etc/resolv.conf", resolv)
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive", "LANG": "C"}
    try:
        for args in (["update", "-q"], ["install", "-y", "-q", "--no-install-recommends", *packages], ["clean"]):
            proc = subprocess.run(["chroot", str(root), "apt-get", *args], capture_output=True, text=True,
                                  env=env, check=False)
            if proc.returncode != 0:
                tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
                msg = f"apt-get {args[0]} in the new image failed ({proc.returncode}): {' | '.join(tail)}"
                raise SandboxError(msg)
    finally:
        if not had:
            resolv.unlink(missing_ok=True)


def _add_user(root: Path) -> None:
    passwd, group = root / "etc/passwd", root / "etc/group"
    if f":{SANDBOX_UID}:" not in passwd.read_text():
        with passwd.open("a") as fh:
            fh.write(PASSWD.splitlines()[1] + "\n")
        with group.open("a") as fh:
            fh.write(GROUP.splitlines()[1] + "\n")
    home = root / "home/tether"
    home.mkdir(parents=True, exist_ok=True)
    os.chown(home, SANDBOX_UID, SANDBOX_UID)
    for point in MOUNT_POINTS:
        (root / point).mkdir(exist_ok=True)
