"""Host folders a sandbox mounts, and the user its commands run as.

Parts: `check_folder()` validates a host folder before anything starts;
`sandbox_user()` chooses the uid:gid. With `user = "auto"` commands run as
the workspace owner, so files they write belong to the host user. When root
owns the workspace (CI, sudo) they run as the image's `tether` user (1000)
instead, never as root; if 1000 cannot write it, the workspace is lent to
1000 (chowned) while the sandbox lives and given back to root at close
(`Handover`); root keeps full access throughout. Lending is refused for top-level
folders (`/tmp`, `/root`) and anything under system folders (`/etc`,
`/usr`, `/var/lib`, ...), so a mistyped path never hands the system to uid 1000.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from common.errors import ConfigError
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


def sandbox_user(user: str, workspace: Path) -> tuple[str, Handover | None]:
    """The uid:gid commands run as (never 0), and the handover to undo at close, if any.

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
        return f"{uid}:{gid}", None
    if st.st_uid != 0:
        return f"{st.st_uid}:{st.st_gid}", None
    uid = gid = SANDBOX_UID
    if can_write(st, uid, gid):
        return f"{uid}:{gid}", None
    return f"{uid}:{gid}", Handover(workspace, uid, gid)


class Handover:
    """Lend a root-owned workspace to the sandbox user, and give it back at close.

    `give()` chowns the tree to uid:gid, remembering each entry's owner;
    `take_back()` restores those owners and gives files the sandbox created
    to the workspace's owner, so afterwards root owns its folder as before
    (git's ownership check included). A SIGKILL in between leaves the tree
    owned by uid:gid; root can still use it, or chown it back.
    """

    def __init__(self, workspace: Path, uid: int, gid: int) -> None:
        if os.geteuid() != 0:
            msg = (
                f"root owns {workspace}, and the sandbox never runs as root; "
                f"run `sudo chown -R {uid}:{gid} {workspace}` or use a folder you own"
            )
            raise ConfigError(msg)
        if len(workspace.parts) - 1 < MIN_CHOWN_DEPTH or any(workspace.is_relative_to(d) for d in SYSTEM_DIRS):
            msg = (
                f"root owns {workspace}, a system or top-level folder Tether will not lend to uid {uid}; "
                "use a workspace folder of its own (e.g. `mkdir /tmp/ws`)"
            )
            raise ConfigError(msg)
        self.workspace, self.uid, self.gid = workspace, uid, gid
        st = workspace.stat()
        self.owner = (st.st_uid, st.st_gid)
        self.original: dict[str, tuple[int, int]] = {}

    def give(self) -> None:
        """Chown the tree to the sandbox user, recording what each entry had.

        Files that are hardlinked from outside the workspace (chowning them would
        lend a host file), or whose setuid/setgid bits or file capabilities a chown
        would clear for good, keep their owner: the sandbox may read them, not write them.
        """
        log.info("lending root-owned workspace %s to %d:%d until the sandbox closes", self.workspace, self.uid, self.gid)
        entries: list[tuple[str, os.stat_result]] = []
        links: dict[tuple[int, int], int] = {}
        for path in _walk(self.workspace):
            with contextlib.suppress(FileNotFoundError):
                st = os.lstat(path)
                entries.append((path, st))
                if not stat.S_ISDIR(st.st_mode):
                    links[st.st_dev, st.st_ino] = links.get((st.st_dev, st.st_ino), 0) + 1
        for path, st in entries:
            self.original[path] = (st.st_uid, st.st_gid)
            if (st.st_uid, st.st_gid) == (self.uid, self.gid):
                continue
            if not stat.S_ISDIR(st.st_mode) and not stat.S_ISLNK(st.st_mode):
                if st.st_nlink > links[st.st_dev, st.st_ino] or _privileged(path, st):
                    log.info("not lending %s (hardlinked from outside the workspace, or setuid/setgid/caps)", path)
                    continue
            with contextlib.suppress(FileNotFoundError):
                os.chown(path, self.uid, self.gid, follow_symlinks=False)

    def take_back(self) -> None:
        """Restore recorded owners; what the sandbox user created goes to the workspace owner."""
        for path in _walk(self.workspace):
            with contextlib.suppress(FileNotFoundError):
                st = os.lstat(path)
                want = self.original.get(path, self.owner if st.st_uid == self.uid else None)
                if want is not None and want != (st.st_uid, st.st_gid):
                    os.chown(path, *want, follow_symlinks=False)
        self.original.clear()


def _privileged(path: str, st: os.stat_result) -> bool:
    """Whether a chown would strip this file's setuid/setgid bits or file capabilities."""
    if st.st_mode & (stat.S_ISUID | stat.S_ISGID):
        return True
    try:
        os.getxattr(path, "security.capability", follow_symlinks=False)
    except OSError:
        return False
    return True


def _walk(root: Path) -> Iterator[str]:
    for dirpath, dirnames, filenames in os.walk(root):
        yield dirpath
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            yield os.path.join(dirpath, name)
