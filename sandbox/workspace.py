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
import resource
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from tether.common.errors import ConfigError
from tether.common.limits import WorkspaceLimits
from tether.common.walk import (
    Deadline,
    DeadlineError,
    Entry,
    chown_entry,
    copy_sparse,
    has_caps,
    open_regular,
    open_root,
    shown,
    walk,
)
from tether.sandbox.lending import LendingRecord
from tether.sandbox.rootfs import SANDBOX_UID

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


def sandbox_user(user: str, workspace: Path, limits: WorkspaceLimits | None = None) -> tuple[str, Handover | None]:
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
    return f"{uid}:{gid}", Handover(workspace, uid, gid, limits)


class Handover:
    """Lend a root-owned workspace to the sandbox user, and give it back at close.

    `give()` chowns the tree to uid:gid, remembering each inode's owner;
    `take_back()` restores those owners and gives entries the sandbox
    created to the workspace's owner, so afterwards root owns its folder as
    before (git's ownership check included). A SIGKILL in between leaves the
    tree owned by uid:gid; root can still use it, or chown it back.

    Both passes walk by file descriptor (common.walk): each folder is pinned
    open with O_NOFOLLOW and each entry is chowned through a descriptor
    checked to be the inode the walk saw, so a uid-1000 process that swaps a
    folder for a symlink to a host folder mid-pass changes nothing outside
    the workspace.
    """

    def __init__(self, workspace: Path, uid: int, gid: int, limits: WorkspaceLimits | None = None) -> None:
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
        self.limits = limits or WorkspaceLimits()
        st = workspace.stat()
        self.owner = (st.st_uid, st.st_gid)
        self.original: dict[tuple[int, int], tuple[int, int]] = {}
        """(device, inode) -> owner before lending, for every inode the workspace held."""
        self.kept: list[str] = []
        """Entries not handed over or back (hardlinked from outside, setuid/setgid/caps), as shown names."""
        self.record: LendingRecord | None = None
        """Where the lending is kept on disk until it is given back (sandbox.lending), if anywhere."""
        self.late_s: float | None = None
        """Set when the last hand-back ran past `host_pass_seconds` (and was finished anyway): how long it took."""

    def give(self) -> None:
        """Chown the tree to the sandbox user, recording what each lent inode had.

        Files that are hardlinked from outside the workspace (chowning them would
        lend a host file), or whose setuid/setgid bits or file capabilities a chown
        would clear for good, keep their owner: the sandbox may read them, not write them.
        Symlinks keep theirs too (a link's owner grants nothing here).
        """
        log.info(
            "lending root-owned workspace %s to %d:%d until the sandbox closes", self.workspace, self.uid, self.gid
        )
        if self.record is not None:  # before the first chown: a crash from here on is given back next time
            self.record.save(self)
        with _pinned(self.workspace) as root:
            depth = self.limits.max_depth
            inside = _link_counts(root, Deadline(self.limits.host_pass_seconds, "lending the workspace"), depth)
            self._give_root(root)
            deadline = Deadline(self.limits.host_pass_seconds, "lending the workspace")
            for entry in walk(root, deadline=deadline, max_depth=depth, what="lending the workspace"):
                st = entry.st
                self.original.setdefault((st.st_dev, st.st_ino), (st.st_uid, st.st_gid))
                if (st.st_uid, st.st_gid) == (self.uid, self.gid) or stat.S_ISLNK(st.st_mode):
                    continue
                if not stat.S_ISDIR(st.st_mode) and (
                        _outside_links(st, inside) or _privileged(entry)):
                    log.info(
                        "not lending %s (hardlinked from outside the workspace, or setuid/setgid/caps)",
                        shown(entry.rel),
                    )
                    self.kept.append(shown(entry.rel))
                    continue
                chown_entry(entry, self.uid, self.gid)
        if self.record is not None:
            self.record.save(self)  # with every inode's owner before lending

    def _give_root(self, root: int) -> None:
        st = os.fstat(root)
        self.original.setdefault((st.st_dev, st.st_ino), (st.st_uid, st.st_gid))
        os.fchown(root, self.uid, self.gid)

    def take_back(self) -> None:
        """Restore recorded owners; what the sandbox user created goes to the workspace owner.

        Always finishes: past `host_pass_seconds` the pass starts over with no
        deadline (the sandbox is gone by then, so the tree can no longer grow)
        and `late_s` says how long it took, for the person to be told. A file
        the sandbox user owns that is hardlinked from outside the workspace is
        replaced by a private copy, so the outside file keeps its owner.
        """
        started = time.monotonic()
        try:
            self._take_back(Deadline(self.limits.host_pass_seconds, "taking the workspace back"))
        except DeadlineError:
            log.warning("handing %s back is past workspace.host_pass_seconds; finishing it", self.workspace)
            self._take_back(None)
            self.late_s = time.monotonic() - started
        self.original.clear()
        if self.record is not None:
            self.record.clear()

    def _take_back(self, deadline: Deadline | None) -> None:
        with _pinned(self.workspace) as root:
            st = os.fstat(root)
            want = self.original.get((st.st_dev, st.st_ino), self.owner)
            if (st.st_uid, st.st_gid) != want:
                os.fchown(root, *want)
            depth = _deepest_possible()  # whatever the sandbox nested must come back
            inside = _link_counts(root, deadline, depth)
            for entry in walk(root, deadline=deadline, max_depth=depth, what="taking the workspace back"):
                st = entry.st
                key = (st.st_dev, st.st_ino)
                mine = st.st_uid == self.uid or st.st_gid == self.gid
                want = self.original.get(key, self.owner if mine else None)
                if want is None or want == (st.st_uid, st.st_gid):
                    continue
                if key not in self.original and stat.S_ISREG(st.st_mode) and _outside_links(st, inside):
                    _break_link(entry, self.owner)
                    continue
                chown_entry(entry, *want)


@contextlib.contextmanager
def _pinned(workspace: Path) -> Iterator[int]:
    fd = open_root(workspace)
    try:
        yield fd
    finally:
        os.close(fd)


def _deepest_possible() -> int:
    """The deepest walk this process has descriptors for."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return 1_000_000 if hard == resource.RLIM_INFINITY else max(hard - 256, 64)


def _link_counts(root: int, deadline: Deadline | None, depth: int) -> dict[tuple[int, int], int]:
    """How many names each non-folder inode has inside the workspace."""
    counts: dict[tuple[int, int], int] = {}
    for entry in walk(root, deadline=deadline, max_depth=depth, what="counting hardlinks"):
        if entry.fd is None and entry.st.st_nlink > 1:
            key = (entry.st.st_dev, entry.st.st_ino)
            counts[key] = counts.get(key, 0) + 1
    return counts


def _outside_links(st: os.stat_result, inside: dict[tuple[int, int], int]) -> bool:
    """Whether the inode has names outside the workspace too."""
    return st.st_nlink > 1 and st.st_nlink > inside.get((st.st_dev, st.st_ino), 0)


def _privileged(entry: Entry) -> bool:
    """Whether a chown would strip this file's setuid/setgid bits or file capabilities."""
    return bool(entry.st.st_mode & (stat.S_ISUID | stat.S_ISGID)) or has_caps(entry)


def _break_link(entry: Entry, owner: tuple[int, int]) -> None:
    """Replace a hardlink to an outside file by a private copy owned by `owner`."""
    got = open_regular(entry.parent, entry.name)
    if got is None:
        return
    src, st = got
    tmp = f".tether-copy-{os.getpid()}-{entry.name}"[:200]
    try:
        dst = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=entry.parent
        )
        try:
            copy_sparse(src, dst, st.st_size)
            os.fchown(dst, *owner)
            os.fchmod(dst, stat.S_IMODE(st.st_mode) & 0o777)
        finally:
            os.close(dst)
        os.rename(tmp, entry.name, src_dir_fd=entry.parent, dst_dir_fd=entry.parent)
    finally:
        os.close(src)
    log.info("replaced %s, hardlinked from outside the workspace, by a private copy", shown(entry.rel))
