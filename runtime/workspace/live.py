"""A workspace manifest kept current by the kernel's change notices (inotify), for per-command diffs.

Walking 200k files costs seconds in Python, on every command. `LiveTree`
walks once (by descriptor, common.walk), putting an inotify watch on every
folder before listing it, and from then on re-reads only the entries the
kernel says changed: a command that touches one file costs milliseconds.

Why it can be trusted for per-command change lists: the notices come from
the kernel, not from the workspace; a name written between the listing and
the watch cannot be missed (the watch is placed first); an overflowing
queue, an unknown watch, or a failure of any kind drops the tree, and the
next call walks everything again. What it does not see: writes through a
shared memory mapping (the kernel sends no notice for them) and writes
through a hardlink in an unwatched folder (the sandbox has none on the
workspace's filesystem). Those reach the gate anyway: the gate's manifest
is a full walk (`WorkspaceWatch.final`), whose stat check catches them
because the kernel moves the file's ctime, which no process can set back.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import stat
import struct
from pathlib import Path
from stat import S_ISREG

from tether.common.limits import WorkspaceLimits
from tether.common.manifest import SKIP_DIRS, FileState, ManifestCache, Scan, left_out, skip_depth, state_of
from tether.common.walk import DIR_FLAGS, Deadline, allocated, open_root, walk_folders

log = logging.getLogger(__name__)

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_Q_OVERFLOW, IN_IGNORED, IN_ONLYDIR, IN_EXCL_UNLINK = 0x4000, 0x8000, 0x1000000, 0x4000000
MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
        | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK)
_EVENT = struct.Struct("iIII")
_libc = ctypes.CDLL(None, use_errno=True)


class NotifyError(OSError):
    """inotify could not be used (no room for watches, queue overflow): walk everything instead."""


def _check(ret: int) -> int:
    if ret < 0:
        err = ctypes.get_errno()
        raise NotifyError(err, os.strerror(err))
    return ret


class LiveTree:
    """One workspace's manifest and size, updated from inotify notices; `close()` when done."""

    def __init__(self, workspace: Path, limits: WorkspaceLimits, cache: ManifestCache, *,
                 what: str = "per-command workspace scan", seed_before: int | None = None) -> None:
        self.workspace, self.limits, self.cache = workspace, limits, cache
        self.seeded: dict[str, tuple[tuple[int, ...], FileState]] | None = None if seed_before is None else {}
        """With `seed_before` (ns): the first walk's regular files changed (mtime and ctime) before it, as
        ManifestCache entries: the stat (device, inode, size, mode, mtime, ctime) read and the state, so the
        tree's hashes can seed a cache (runtime.workspace.watch.save_start)."""
        self._seed_before = seed_before
        self.states: dict[str, FileState] = {}
        self.sizes: dict[str, tuple[int, int]] = {}
        """rel -> (apparent, allocated) of every entry, `.git` included."""
        self.dirs: dict[str, tuple[int, int]] = {}
        """Folder rel -> (device, inode) it had when walked."""
        self.wds: dict[int, str] = {}
        self.apparent = self.allocated = 0
        self.changes: dict[str, FileState | None] = {}
        """Entries touched by the last refresh -> their state before it (None: absent)."""
        self.notify = _check(_libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
        self.root = open_root(workspace)
        try:
            self._walk(self.root, "", Deadline(limits.host_pass_seconds, what), fresh=True)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Drop every watch (closing the inotify descriptor) and the root descriptor."""
        for fd in (self.notify, self.root):
            if fd >= 0:
                os.close(fd)
        self.notify = self.root = -1

    def scan(self) -> Scan:
        """The current totals and a live (not copied) view of the manifest."""
        return Scan(states=self.states, apparent=self.apparent, allocated=self.allocated)

    def _size(self, rel: str, size: tuple[int, int] | None) -> None:
        """Set (or, with None, forget) one entry's size, keeping the totals."""
        old = self.sizes.pop(rel, (0, 0)) if size is None else self.sizes.get(rel, (0, 0))
        if size is not None:
            self.sizes[rel] = size
        new = size or (0, 0)
        self.apparent += new[0] - old[0]
        self.allocated += new[1] - old[1]

    def refresh(self) -> dict[str, FileState | None]:
        """Apply every pending notice: re-read the entries named, re-walk new folders.

        Returns the manifest entries touched, each with its state before (None: it was absent).

        Raises:
            NotifyError: the queue overflowed or a notice cannot be placed; drop this tree.
        """
        deadline = Deadline(self.limits.host_pass_seconds, "per-command workspace scan")
        self.changes = {}
        dirty: dict[str, None] = {}
        while True:
            try:
                data = os.read(self.notify, 1 << 20)
            except BlockingIOError:
                break
            off = 0
            while off < len(data):
                wd, mask, _, size = _EVENT.unpack_from(data, off)
                name = data[off + _EVENT.size: off + _EVENT.size + size].rstrip(b"\0")
                off += _EVENT.size + size
                if mask & IN_Q_OVERFLOW:
                    msg = "inotify queue overflowed"
                    raise NotifyError(errno.EOVERFLOW, msg)
                folder = self.wds.get(wd)
                if mask & IN_IGNORED:
                    self.wds.pop(wd, None)
                    continue
                if folder is None or not name:
                    continue  # a folder we no longer track, or a notice about a folder itself
                dirty[f"{folder}/{os.fsdecode(name)}".lstrip("/")] = None
        for rel in dirty:
            deadline.check()
            self._sync(rel, deadline)
        return self.changes

    def _sync(self, rel: str, deadline: Deadline) -> None:
        """Bring one entry (and, for a new folder, everything under it) up to date."""
        parent = self._open_parent(rel)
        name = rel.rpartition("/")[2]
        try:
            st = None if parent is None else _lstat(parent, name)
            if st is None:
                self._drop(rel)
            elif stat.S_ISDIR(st.st_mode):
                if self.dirs.get(rel) != _dev_ino(st):
                    self._drop(rel)
                    fd = os.open(name, DIR_FLAGS, dir_fd=parent)
                    try:
                        self._size(rel, (0, allocated(os.fstat(fd))))
                        self._walk(fd, rel, deadline)
                    finally:
                        os.close(fd)
            else:
                if rel in self.dirs:
                    self._drop(rel)
                self._put(parent, name, rel, st, deadline)
        finally:
            if parent is not None and parent != self.root:
                os.close(parent)

    def _open_parent(self, rel: str) -> int | None:
        """The descriptor of `rel`'s folder, opened component by component without following links."""
        fd = self.root
        parts = rel.split("/")[:-1]
        for part in parts:
            try:
                sub = os.open(part, DIR_FLAGS, dir_fd=fd)
            except OSError:
                sub = -1
            if fd != self.root:
                os.close(fd)
            if sub < 0:
                return None
            fd = sub
        return fd

    def _walk(self, fd: int, rel: str, deadline: Deadline, *, fresh: bool = False) -> None:
        """Watch and read every folder under `fd` (itself included, counted by the caller), then every entry.

        One loop per folder (common.walk.walk_folders) does for each entry
        what `_put` does, inline: at 200k files the per-entry calls cost seconds.
        `fresh`: the tree's first walk (nothing known yet, no change list kept).
        """
        sizes, states, changes, cache = self.sizes, self.states, self.changes, self.cache
        seeded = self.seeded if fresh else None
        before = self._seed_before or 0
        known = cache.entries
        apparent = allocated_bytes = 0
        try:
            for folder in walk_folders(fd, max_depth=self.limits.max_depth, deadline=deadline, rel=rel,
                                       on_dir=self._watch, what="per-command workspace scan"):
                here = folder.rel
                if folder.st is not None and here:
                    self.dirs[here] = (folder.st.st_dev, folder.st.st_ino)
                    if here != rel:
                        size = (0, folder.st.st_blocks * 512)
                        old = sizes.get(here, (0, 0))
                        sizes[here] = size
                        allocated_bytes += size[1] - old[1]
                        apparent -= old[0]
                prefix = f"{here}/" if here else ""
                skipped = skip_depth(prefix, SKIP_DIRS) is not None
                parent = folder.fd
                for name, st in folder.files:
                    entry = prefix + name
                    length, blocks = st.st_size, st.st_blocks * 512
                    if fresh:
                        apparent += length
                        allocated_bytes += blocks
                    else:
                        old = sizes.get(entry, (0, 0))
                        apparent += length - old[0]
                        allocated_bytes += blocks - old[1]
                    sizes[entry] = (length, blocks)
                    if skipped and _skipped(entry):
                        continue
                    mode = st.st_mode
                    if S_ISREG(mode):
                        sig = (st.st_dev, st.st_ino, length, mode, st.st_mtime_ns, st.st_ctime_ns)
                        hit = known.get(entry)
                        if hit is not None and hit[0] == sig:
                            state = hit[1]
                        else:
                            hit = None
                            state = state_of(parent, name, entry, st, self.limits, deadline, cache)
                        if seeded is not None and state is not None and sig[4] < before and sig[5] < before:
                            seeded[entry] = hit or (sig, state)  # a regular file's state has no link
                    else:
                        state = state_of(parent, name, entry, st, self.limits, deadline, cache)
                    if not fresh:
                        changes.setdefault(entry, states.get(entry))
                    if state is None:
                        states.pop(entry, None)
                    else:
                        states[entry] = state
        finally:
            self.apparent += apparent
            self.allocated += allocated_bytes

    def _watch(self, fd: int, rel: str) -> None:
        wd = _check(_libc.inotify_add_watch(self.notify, f"/proc/self/fd/{fd}".encode(), MASK))
        self.wds[wd] = rel

    def _put(self, parent: int, name: str, rel: str, st: os.stat_result, deadline: Deadline) -> None:
        self._size(rel, (st.st_size, allocated(st)))
        if _skipped(rel):
            return
        state = state_of(parent, name, rel, st, self.limits, deadline, self.cache)
        self.changes.setdefault(rel, self.states.get(rel))
        if state is None:
            self.states.pop(rel, None)
        else:
            self.states[rel] = state

    def _drop(self, rel: str) -> None:
        """Forget `rel` and everything under it (its watches go when the kernel says so)."""
        self.changes.setdefault(rel, self.states.pop(rel, None))
        self._size(rel, None)
        if self.dirs.pop(rel, None) is None:
            return  # not a folder: nothing below it
        below = rel + "/"
        for key in [k for k in self.sizes if k.startswith(below)]:
            self._size(key, None)
            self.changes.setdefault(key, self.states.pop(key, None))
            self.dirs.pop(key, None)
        for wd in [w for w, r in self.wds.items() if r == rel or r.startswith(below)]:
            del self.wds[wd]


def _skipped(rel: str) -> bool:
    return left_out(rel)


def _dev_ino(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def _lstat(parent: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return None
