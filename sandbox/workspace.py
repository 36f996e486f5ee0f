"""Host folders a sandbox mounts, and the user its commands run as.

Parts: `check_folder()` validates a host folder before anything starts;
`sandbox_user()` chooses the uid:gid. With `user = "auto"` commands run as
the workspace owner, so files they write belong to the host user. When root
owns the workspace (CI, sudo) they run as the image's `tether` user (1000)
instead, never as root, and the workspace is chowned to 1000 so that user can
write it; root keeps full access. That chown is refused for top-level
folders (`/tmp`, `/root`) and anything under system folders (`/etc`,
`/usr`, `/var/lib`, ...), so a mistyped path never hands the system to uid 1000.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from sandbox.errors import ConfigError
from sandbox.rootfs import SANDBOX_UID

log = logging.getLogger(__name__)
MIN_CHOWN_DEPTH = 2
SYSTEM_DIRS = tuple(Path(p) for p in (
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/run",
    "/sbin", "/sys", "/usr", "/var/lib", "/var/run", "/var/spool",
))


def check_folder(path: Path, role: str, *, writable: bool) -> Path:
    """Resolve `path` and make sure it is a folder the host user can use.

    Raises:
        ConfigError: missing, not a folder, or not writable when it must be.
    """
    resolved = Path(path).expanduser().resolve()
    if not resolved.exists():
        msg = f"{role} {resolved} does not exist; create it with `mkdir -p {resolved}`"
        raise ConfigError(msg)
    if not resolved.is_dir():
        msg = f"{role} {resolved} is not a folder; pass a folder"
        raise ConfigError(msg)
    if writable and not os.access(resolved, os.W_OK | os.X_OK):
        msg = f"{role} {resolved} is not writable by you; run `chmod u+w {resolved}` or pick another folder"
        raise ConfigError(msg)
    return resolved


def can_write(st: os.stat_result, uid: int, gid: int) -> bool:
    """Whether uid:gid may create files in a folder with this stat (mode bits only)."""
    if uid == st.st_uid:
        bits = stat.S_IWUSR | stat.S_IXUSR
    elif gid == st.st_gid:
        bits = stat.S_IWGRP | stat.S_IXGRP
    else:
        bits = stat.S_IWOTH | stat.S_IXOTH
    return st.st_mode & bits == bits


def _parse(user: str) -> tuple[int, int]:
    uid, _, gid = user.partition(":")
    return int(uid), int(gid or uid)


def sandbox_user(user: str, workspace: Path) -> str:
    """The uid:gid commands run as; never 0.

    Raises:
        ConfigError: the chosen user cannot write the workspace and Tether may not fix it.
    """
    st = workspace.stat()
    if user != "auto":
        uid, gid = _parse(user)
        if not can_write(st, uid, gid):
            msg = (
                f"sandbox.user {uid}:{gid} cannot write {workspace} (owner {st.st_uid}:{st.st_gid}, "
                f"mode {stat.filemode(st.st_mode)}); run `chown -R {uid}:{gid} {workspace}` "
                "or set sandbox.user = \"auto\""
            )
            raise ConfigError(msg)
        return f"{uid}:{gid}"
    if st.st_uid != 0:
        return f"{st.st_uid}:{st.st_gid}"
    uid = gid = SANDBOX_UID
    if not can_write(st, uid, gid):
        _hand_over(workspace, uid, gid)
    return f"{uid}:{gid}"


def _hand_over(workspace: Path, uid: int, gid: int) -> None:
    if os.geteuid() != 0:
        msg = (
            f"root owns {workspace}, and the sandbox never runs as root; "
            f"run `sudo chown -R {uid}:{gid} {workspace}` or use a folder you own"
        )
        raise ConfigError(msg)
    if len(workspace.parts) - 1 < MIN_CHOWN_DEPTH or any(workspace.is_relative_to(d) for d in SYSTEM_DIRS):
        msg = (
            f"root owns {workspace}, a system or top-level folder Tether will not hand to uid {uid}; "
            "use a workspace folder of its own (e.g. `mkdir /tmp/ws`)"
        )
        raise ConfigError(msg)
    log.warning("workspace %s is root-owned: chowning it to %d:%d for the sandbox user", workspace, uid, gid)
    for dirpath, dirnames, filenames in os.walk(workspace):
        os.chown(dirpath, uid, gid, follow_symlinks=False)
        for name in dirnames + filenames:
            os.chown(os.path.join(dirpath, name), uid, gid, follow_symlinks=False)
