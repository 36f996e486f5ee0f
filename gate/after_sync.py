"""The after copy made from a pre-run copy: `sync()` writes only what the run changed.

Why: creating every file of the final workspace again was most of the after
side's time at the gate (a file's creation costs several times its read).
The warm after side starts on a copy of the pre-run snapshot (built while
the run works, its signature checked at hand-over: gate.warm); `sync()` then
makes it the same copy gate.copies.build_after would make of the workspace
as it is now: files with their bytes and mode (never setuid, setgid or
sticky), folders with their modes (always open to their owner), links as
links, FIFOs, sockets and devices left out. A file is kept only where its
size and every byte are the same as the workspace's (both are read: no
stat, digest or journal is trusted); anything else is written afresh, and
what the workspace no longer holds is removed. Walked by descriptor, no
link followed, within the workspace limits' depth and deadline.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from tether.common.limits import WorkspaceLimits
from tether.common.walk import (
    DIR_FLAGS,
    Deadline,
    Entry,
    Folders,
    copy_sparse,
    open_regular,
    open_root,
    read_link,
    remove_entry,
    walk,
)
from tether.gate.copies import dir_mode, file_mode

CHUNK = 1 << 20
CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def sync(folder: Path, workspace: Path, limits: WorkspaceLimits | None = None) -> None:
    """Make `folder` a copy of `workspace` as it is now, writing only what differs; what it writes goes to the
    folder's owner (the sandbox's user, where the sandbox's start lent it).

    Raises:
        OSError, WalkError: unreadable, too deep, or past the deadline (the caller builds a copy afresh then).
    """
    limits = limits or WorkspaceLimits()
    deadline = Deadline(limits.host_pass_seconds, "the gate's after copy")
    src_root, dst_root = open_root(workspace), open_root(folder)
    owner = os.fstat(dst_root)
    give = (owner.st_uid, owner.st_gid) if os.geteuid() == 0 and owner.st_uid != 0 else None
    seen: set[str] = set()
    dirs: dict[str, int] = {}
    try:
        with Folders(dst_root) as dst:
            for e in walk(src_root, max_depth=limits.max_depth, deadline=deadline, what="the gate's after copy"):
                if _put(e, dst.parent(e.rel), dirs, give, deadline):
                    seen.add(e.rel)
        _remove_unseen(dst_root, seen, limits, deadline)
        with Folders(dst_root) as dst:
            for rel in sorted(dirs, reverse=True):  # deepest first, once the files are in place
                _chmod_dir(dst.parent(rel), rel.rpartition("/")[2], dirs[rel])
        os.fchmod(dst_root, dir_mode(os.fstat(src_root).st_mode))
    finally:
        os.close(src_root)
        os.close(dst_root)


def _lstat(parent: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _put(e: Entry, parent: int, dirs: dict[str, int], give: tuple[int, int] | None, deadline: Deadline) -> bool:
    """Bring one workspace entry into the copy (below `parent`); False when it is left out."""
    kind, name, st = e.kind, e.name, e.st
    have = _lstat(parent, name)
    if kind == "dir":
        if have is None or not stat.S_ISDIR(have.st_mode):
            if have is not None:
                remove_entry(parent, name, deadline)
            os.mkdir(name, 0o700, dir_fd=parent)
            _give(parent, name, give)
        dirs[e.rel] = dir_mode(st.st_mode)
        return True
    if kind == "symlink":
        target = read_link(e.parent, name)
        if target is None:
            return False
        if have is not None and stat.S_ISLNK(have.st_mode) and read_link(parent, name) == target:
            return True
        if have is not None:
            remove_entry(parent, name, deadline)
        os.symlink(os.fsencode(target), os.fsencode(name), dir_fd=parent)
        _give(parent, name, give)
        return True
    if kind != "file":
        return False  # FIFOs, sockets, devices: never in a gate copy
    got = open_regular(e.parent, name)
    if got is None:
        return False
    src, now = got
    try:
        mode = file_mode(now.st_mode)
        if have is not None and stat.S_ISREG(have.st_mode) and have.st_size == now.st_size \
                and _same_bytes(src, parent, name, now.st_size, deadline):
            if stat.S_IMODE(have.st_mode) != mode:
                _chmod_file(parent, name, mode)
            return True
        if have is not None:
            remove_entry(parent, name, deadline)
        out = os.open(name, CREATE, 0o600, dir_fd=parent)
        try:
            copy_sparse(src, out, now.st_size, deadline)
            os.fchmod(out, mode)
            if give is not None:
                os.fchown(out, *give)
        finally:
            os.close(out)
        return True
    finally:
        os.close(src)


def _same_bytes(src: int, parent: int, name: str, size: int, deadline: Deadline) -> bool:
    """Whether the copy's file `name` holds exactly the `size` bytes `src` holds (both read from the start)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=parent)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        done = 0
        while done < size:
            deadline.check()
            want = min(CHUNK, size - done)
            a, b = os.pread(src, want, done), os.pread(fd, want, done)
            if a != b or not a:
                return False
            done += len(a)
        return os.pread(src, 1, size) == b"" and os.pread(fd, 1, size) == b""
    finally:
        os.close(fd)


def _give(parent: int, name: str, give: tuple[int, int] | None) -> None:
    if give is not None:
        os.chown(name, *give, dir_fd=parent, follow_symlinks=False)


def _chmod_file(parent: int, name: str, mode: int) -> None:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=parent)
    try:
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def _chmod_dir(parent: int, name: str, mode: int) -> None:
    with contextlib.suppress(OSError):  # a folder the copy no longer holds is left alone
        fd = os.open(name, DIR_FLAGS, dir_fd=parent)
        try:
            os.fchmod(fd, mode)
        finally:
            os.close(fd)


def _remove_unseen(root: int, seen: set[str], limits: WorkspaceLimits, deadline: Deadline) -> None:
    """Remove every entry of the copy the workspace does not hold now (a folder with all below it)."""
    gone = [e.rel for e in walk(root, max_depth=limits.max_depth + 1, deadline=deadline, what="the gate's after copy")
            if e.rel not in seen]  # walk order: a folder before what it holds
    removed: set[str] = set()
    with Folders(root) as dst:
        for rel in gone:
            parts = rel.split("/")
            if any("/".join(parts[:i]) in removed for i in range(1, len(parts))):
                continue  # went with its folder
            remove_entry(dst.parent(rel), parts[-1], deadline)
            removed.add(rel)
