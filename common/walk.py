"""One safe way to walk a folder the sandbox controls: by file descriptor, never by path.

Everything Tether does on the host to a workspace (lend it, take it back,
hash it, snapshot it, restore it, read files for the gate) goes through
here, because a process in the sandbox may swap any folder for a symlink,
any file for a FIFO, at any moment. The rules:

- Each folder is opened relative to its parent's descriptor with
  `O_NOFOLLOW|O_DIRECTORY`; nothing is ever re-resolved from a path string,
  so a folder swapped for a symlink mid-walk cannot lead the walk out.
- Files are opened as `O_PATH|O_NOFOLLOW` first and `fstat`ed; only a
  regular file is then reopened for reading (through /proc/self/fd, the
  same inode), so a FIFO, socket or device is never opened for reading.
- Names are `str` made by `os.fsdecode` (surrogate escapes keep every byte):
  `os.fsencode(rel)` gives the exact bytes back. `shown()` turns one into
  text that any JSON or terminal accepts.
- Depth is bounded by `max_depth` (a `WalkError` names it); nothing else
  limits it, since no path is ever built for the kernel (a 2000-deep tree
  beyond PATH_MAX works).
- A `Deadline` bounds every pass; past it, `WalkError` says which pass.

`walk()` yields `Entry` objects whose descriptors stay open only until the
next entry is asked for.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import os
import resource
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tether.common.errors import TetherError

MAX_DEPTH = 4096
"""Default deepest folder level walked; deeper trees fail the pass with a WalkError."""
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
PATH_FLAGS = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC
CHUNK = 1 << 20
AT_EMPTY_PATH = 0x1000
AT_SYMLINK_NOFOLLOW = 0x100
_libc = ctypes.CDLL(None, use_errno=True)


class WalkError(TetherError, OSError):
    """A workspace pass could not finish safely: too deep, out of time, or unreadable."""


class DeadlineError(WalkError, TimeoutError):
    """A workspace pass ran past its `Deadline`."""


class Deadline:
    """A wall-clock budget for one host-side pass; `check()` raises once it is spent."""

    def __init__(self, seconds: float | None, what: str) -> None:
        self.what = what
        self.seconds = seconds
        self.ends = None if seconds is None else time.monotonic() + seconds

    def check(self) -> None:
        """Raise WalkError naming the pass when its time is up."""
        if self.ends is not None and time.monotonic() > self.ends:
            msg = (f"{self.what} took longer than {self.seconds:g} s and was stopped; the workspace is too big "
                   "or keeps changing; raise workspace.host_pass_seconds or make the workspace smaller")
            raise DeadlineError(msg)


@dataclass(slots=True)
class Entry:
    """One workspace entry, seen through its parent folder's descriptor."""

    rel: str
    """Path relative to the root, `/`-joined, surrogate-escaped (`os.fsencode` gives the bytes)."""
    name: str
    parent: int
    """Descriptor of the folder holding it; valid until the walk moves on."""
    st: os.stat_result
    """lstat of the entry; for folders, fstat of the opened folder."""
    fd: int | None = None
    """For folders: the folder's own descriptor (its children's `parent`)."""
    depth: int = 1

    @property
    def kind(self) -> str:
        """`dir`, `file`, `symlink` or `other` (FIFO, socket, device)."""
        return kind_of(self.st)


def kind_of(st: os.stat_result) -> str:
    """`dir`, `file`, `symlink` or `other` for a stat result."""
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    return "symlink" if stat.S_ISLNK(mode) else "other"


def shown(rel: str) -> str:
    """The name as valid text: undecodable bytes become `\\xNN` (for JSON, logs and people)."""
    return os.fsencode(rel).decode("utf-8", "backslashreplace")


def open_root(root: Path | str) -> int:
    """Descriptor of the workspace folder itself; refuses a symlink or a non-folder."""
    try:
        return os.open(root, DIR_FLAGS)
    except OSError as e:
        msg = f"cannot open workspace folder {root}: {e.strerror}; it must be a real folder, not a symlink"
        raise WalkError(msg) from e


def _fd_room(max_depth: int) -> None:
    """Make sure a walk `max_depth` folders deep has descriptors to spare."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = max_depth + 256
    if soft != resource.RLIM_INFINITY and soft < want:
        new = want if hard == resource.RLIM_INFINITY else min(want, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))


def walk(
    root: Path | str | int,
    *,
    prune: frozenset[str] = frozenset(),
    max_depth: int = MAX_DEPTH,
    deadline: Deadline | None = None,
    what: str = "workspace walk",
    prefix: str = "",
    on_dir: Callable[[int, str], None] | None = None,
) -> Iterator[Entry]:
    """Every entry under `root`, parents before children, not following any symlink.

    `root` is a path or an open folder descriptor (not closed here). Folders
    named in `prune` are neither yielded nor entered. Entries that vanish
    mid-walk are skipped; a folder swapped for something else mid-walk is
    yielded as what it now is. `prefix` (e.g. `sub/`) is put before every
    `rel`, for walking a subtree. `on_dir(fd, rel)` is called for each
    folder, the root included, after it is opened and before it is listed
    (to watch it before reading it).

    Raises:
        WalkError: deeper than `max_depth`, past the deadline, or a folder unreadable.
    """
    _fd_room(max_depth)
    own = not isinstance(root, int)
    top = open_root(root) if own else root
    stack: list[tuple[int, str, Iterator[os.DirEntry[str]], int]] = []
    try:
        if on_dir is not None:
            on_dir(top, prefix.rstrip("/"))
        stack.append((top, prefix, _list(top, prefix), 1))
        while stack:
            fd, prefix, it, depth = stack[-1]
            found = next(it, None)
            if found is None:
                stack.pop()
                if fd != top:
                    os.close(fd)
                continue
            if deadline is not None:
                deadline.check()
            entry = _entry(fd, prefix, found, depth, prune)
            if entry is None:
                continue
            if entry.fd is None:
                yield entry
                continue
            if depth > max_depth:
                os.close(entry.fd)
                msg = (
                    f"{what}: folders nested deeper than {max_depth} levels (at {shown(entry.rel)[:200]}...); "
                    "flatten the tree"
                )
                raise WalkError(msg)
            if on_dir is not None:
                on_dir(entry.fd, entry.rel)
            stack.append((entry.fd, entry.rel + "/", _list(entry.fd, entry.rel), depth + 1))
            yield entry
    finally:
        for fd, _, _, _ in stack:
            if fd != top:
                os.close(fd)
        if own:
            os.close(top)


@dataclass(slots=True)
class Folder:
    """One folder of a `walk_folders()` pass and what it holds that is not a folder."""

    fd: int
    """The folder's descriptor (its entries' parent); valid until the walk moves on."""
    rel: str
    """Its path relative to the root (`""` for the root)."""
    st: os.stat_result | None
    """fstat of the opened folder; None for a late batch (see `walk_folders`)."""
    files: list[tuple[str, os.stat_result]]
    """(name, lstat) of each entry that is not a folder, in name order."""


CHECK_EVERY = 256
"""Entries stat-ed between two deadline checks of `walk_folders` (a folder of a million files stays bounded)."""


def walk_folders(root: int, *, max_depth: int = MAX_DEPTH, deadline: Deadline | None = None,
                 what: str = "workspace walk", rel: str = "",
                 on_dir: Callable[[int, str], None] | None = None) -> Iterator[Folder]:
    """Every folder under the open folder `root` (itself first), parents before children, with its non-folders.

    The same walk as `walk()` by the same rules (each folder opened by
    descriptor from its parent with O_NOFOLLOW, lstat through the parent's
    descriptor, depth bounded, a deadline), a folder at a time: a caller's
    loop over `files` does per entry only what it needs. `rel` names `root`
    (the prefix of every name). A folder that became something else between
    its listing and its opening (a symlink, a file) is reported in a late
    batch of its parent: `Folder(fd=parent, rel=parent's, st=None, files=[it])`.

    Raises:
        WalkError: deeper than `max_depth`, past the deadline, or a folder unreadable.
    """
    _fd_room(max_depth)
    if on_dir is not None:
        on_dir(root, rel)
    files, dirs = _stat_all(root, rel, deadline)
    yield Folder(root, rel, os.fstat(root), files)
    stack: list[tuple[int, str, Iterator[str], int]] = [(root, rel, iter(dirs), rel.count("/") + 1 if rel else 0)]
    try:
        while stack:
            fd, here, names, depth = stack[-1]
            name = next(names, None)
            if name is None:
                stack.pop()
                if fd != root:
                    os.close(fd)
                continue
            sub_rel = f"{here}/{name}" if here else name
            got = _open_folder(fd, name, sub_rel)
            if got is None:
                continue
            if isinstance(got, os.stat_result):  # no longer a folder: what it is now, in a late batch
                yield Folder(fd, here, None, [(name, got)])
                continue
            if depth + 1 > max_depth:
                os.close(got)
                msg = (f"{what}: folders nested deeper than {max_depth} levels (at {shown(sub_rel)[:200]}...); "
                       "flatten the tree")
                raise WalkError(msg)
            try:
                if deadline is not None:
                    deadline.check()
                if on_dir is not None:
                    on_dir(got, sub_rel)
                files, dirs = _stat_all(got, sub_rel, deadline)
                st = os.fstat(got)
            except BaseException:
                os.close(got)
                raise
            stack.append((got, sub_rel, iter(dirs), depth + 1))
            yield Folder(got, sub_rel, st, files)
    finally:
        for fd, _, _, _ in stack:
            if fd != root:
                os.close(fd)


def _stat_all(fd: int, rel: str, deadline: Deadline | None) -> tuple[list[tuple[str, os.stat_result]], list[str]]:
    """(name, lstat) of the folder's non-folders and the names of its folders, each list in name order."""
    files: list[tuple[str, os.stat_result]] = []
    dirs: list[str] = []
    n = 0
    for found in _list(fd, rel):
        n += 1
        if deadline is not None and n % CHECK_EVERY == 0:
            deadline.check()
        try:
            st = found.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(st.st_mode):
            dirs.append(found.name)
        else:
            files.append((found.name, st))
    return files, dirs


def _open_folder(parent: int, name: str, rel: str) -> int | os.stat_result | None:
    """The descriptor of the folder `name`; its lstat when it is no longer a folder; None when it is gone."""
    try:
        return os.open(name, DIR_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno not in (errno.ELOOP, errno.ENOTDIR):
            msg = f"cannot open workspace folder {shown(rel)}: {e.strerror}"
            raise WalkError(msg) from e
    try:  # swapped for a symlink or file since it was listed: report what it is now
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return None if stat.S_ISDIR(st.st_mode) else st


def _list(fd: int, rel: str) -> Iterator[os.DirEntry[str]]:
    """The folder's entries, read at once (so the listing cannot grow under us forever)."""
    try:
        with os.scandir(fd) as it:
            found = sorted(it, key=lambda e: e.name)
    except OSError as e:
        msg = f"cannot list workspace folder {shown(rel) or '.'}: {e.strerror}; make it readable"
        raise WalkError(msg) from e
    return iter(found)


def _entry(parent: int, prefix: str, found: os.DirEntry[str], depth: int, prune: frozenset[str]) -> Entry | None:
    name = found.name
    try:
        st = found.stat(follow_symlinks=False)
    except FileNotFoundError:
        return None
    if not stat.S_ISDIR(st.st_mode):
        return Entry(prefix + name, name, parent, st, None, depth)
    if name in prune:
        return None
    opened = _open_folder(parent, name, prefix + name)
    if opened is None:
        return None
    if isinstance(opened, os.stat_result):  # swapped for a symlink or file since it was listed
        return Entry(prefix + name, name, parent, opened, None, depth)
    return Entry(prefix + name, name, parent, os.fstat(opened), opened, depth)


def read_link(parent: int, name: str) -> str | None:
    """The target of the symlink `name` (surrogate-escaped), or None if it is no longer a symlink."""
    try:
        return os.fsdecode(os.readlink(os.fsencode(name), dir_fd=parent))
    except OSError as e:
        if e.errno in (errno.EINVAL, errno.ENOENT):  # swapped for a non-link, or gone, since listed
            return None
        raise


def open_path(parent: int, name: str) -> tuple[int, os.stat_result] | None:
    """An `O_PATH` descriptor of the entry itself (a symlink is not followed) and its fstat."""
    try:
        fd = os.open(name, PATH_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        return None
    return fd, os.fstat(fd)


def open_regular(parent: int, name: str) -> tuple[int, os.stat_result] | None:
    """A read descriptor of the entry if, and only if, it is a regular file now.

    FIFOs, sockets and devices are never opened for reading (no blocking,
    no side effect); the read descriptor is made from the checked inode.
    """
    got = open_path(parent, name)
    if got is None:
        return None
    pfd, st = got
    try:
        if not stat.S_ISREG(st.st_mode):
            return None
        fd = os.open(f"/proc/self/fd/{pfd}", os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY | os.O_NONBLOCK)
    finally:
        os.close(pfd)
    again = os.fstat(fd)
    if (again.st_dev, again.st_ino) != (st.st_dev, st.st_ino):  # cannot happen; belt and braces
        os.close(fd)
        return None
    return fd, again


def data_segments(fd: int, size: int) -> Iterator[tuple[int, int]]:
    """(offset, length) of the file's data, skipping holes (SEEK_DATA/SEEK_HOLE)."""
    pos = 0
    while pos < size:
        try:
            start = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError as e:
            if e.errno == errno.ENXIO:  # only a hole from here on
                return
            if e.errno == errno.EINVAL:  # no SEEK_DATA support: all data
                yield pos, size - pos
                return
            raise
        end = min(os.lseek(fd, start, os.SEEK_HOLE), size)
        if end <= start:
            return
        yield start, end - start
        pos = end


def read_segments(fd: int, size: int, limit: int, deadline: Deadline | None = None) -> Iterator[tuple[int, bytes]]:
    """(offset, bytes) of the file's data segments, at most `limit` bytes in all."""
    left = limit
    for start, length in data_segments(fd, size):
        off, stop = start, start + length
        while off < stop and left > 0:
            if deadline is not None:
                deadline.check()
            chunk = os.pread(fd, min(CHUNK, stop - off, left), off)
            if not chunk:
                return
            yield off, chunk
            off += len(chunk)
            left -= len(chunk)
        if left <= 0:
            return


def hash_file(fd: int, st: os.stat_result, max_bytes: int, deadline: Deadline | None = None) -> str:
    """sha256 of a regular file's data segments, reading at most `max_bytes`.

    Holes are skipped (a 15 TiB sparse file costs nothing). When the data
    exceeds `max_bytes`, the size, inode, mtime and ctime join the digest
    instead of the rest, so any later write still changes it.
    """
    digest = hashlib.sha256(b"size %d\n" % st.st_size)
    read = 0
    for off, chunk in read_segments(fd, st.st_size, max_bytes + 1, deadline):
        digest.update(b"@%d:" % off)
        digest.update(chunk)
        read += len(chunk)
    if read > max_bytes:
        digest.update(b"capped %d %d %d %d" % (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return digest.hexdigest()


def copy_sparse(src: int, dst: int, size: int, deadline: Deadline | None = None) -> int:
    """Copy a regular file's data segments from `src` to `dst`, keeping holes; return bytes written.

    `dst` ends `size` bytes long; only the data is written, so a 15 TiB
    sparse file with 4 KiB of data costs 4 KiB.
    """
    written = 0
    for off, chunk in read_segments(src, size, size, deadline):
        view = memoryview(chunk)
        while view:
            n = os.pwrite(dst, view, off)
            view, off, written = view[n:], off + n, written + n
    os.ftruncate(dst, size)
    return written


def allocated(st: os.stat_result) -> int:
    """Bytes the file really takes on disk (holes excluded)."""
    return st.st_blocks * 512


def read_head(parent: int, name: str, limit: int) -> bytes | None:
    """Up to `limit` leading bytes of a regular file (holes read as nothing), or None if not one."""
    got = open_regular(parent, name)
    if got is None:
        return None
    fd, st = got
    try:
        out = bytearray()
        for off, chunk in read_segments(fd, st.st_size, limit):
            if off > len(out):
                out += bytes(min(off, limit) - len(out))
            out += chunk
        return bytes(out[:limit])
    finally:
        os.close(fd)


def read_rel(root: Path | str, rel: str, limit: int) -> bytes | None:
    """Up to `limit` bytes of the regular file at `rel` under `root`, walking each folder by descriptor.

    None when any component is missing, a symlink, or not a regular file.
    """
    parts = [p for p in rel.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        return None
    fds = [open_root(root)]
    try:
        for part in parts[:-1]:
            try:
                fds.append(os.open(part, DIR_FLAGS, dir_fd=fds[-1]))
            except OSError:
                return None
        return read_head(fds[-1], parts[-1], limit)
    finally:
        for fd in fds:
            os.close(fd)


def chown_entry(entry: Entry, uid: int, gid: int) -> bool:
    """Give the entry (never what a symlink points at) to uid:gid; False if it changed or vanished.

    Folders are chowned through their own descriptor; anything else through
    an `O_PATH` descriptor checked to be the same inode the walk saw.
    """
    if entry.fd is not None:
        os.fchown(entry.fd, uid, gid)
        return True
    got = open_path(entry.parent, entry.name)
    if got is None:
        return False
    fd, st = got
    try:
        if (st.st_dev, st.st_ino) != (entry.st.st_dev, entry.st.st_ino):
            return False
        if _libc.fchownat(fd, b"", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), shown(entry.rel))
        return True
    finally:
        os.close(fd)


def has_caps(entry: Entry) -> bool:
    """Whether a regular file carries file capabilities (a chown would strip them)."""
    got = open_path(entry.parent, entry.name)
    if got is None:
        return False
    fd, st = got
    try:
        if not stat.S_ISREG(st.st_mode):
            return False
        os.getxattr(f"/proc/self/fd/{fd}", "security.capability")
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def remove_entry(parent: int, name: str, deadline: Deadline | None = None) -> list[str]:
    """Delete a file, link or whole folder below `parent`; return the names removed (folders end in `/`).

    Folders are emptied through their own descriptors (each made writable
    first), children before parents, so a symlink inside is removed, never
    followed, and any depth works.
    """
    try:
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return []
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(name, dir_fd=parent)
        return [name]
    gone = [name + "/"]
    fd = _open_writable(parent, name)
    stack = [(parent, name, fd, name, _list(fd, name))]
    try:
        _empty(stack, gone, deadline)
    finally:
        for _, _, left, _, _ in stack:
            os.close(left)
    return gone


def _empty(stack: list, gone: list[str], deadline: Deadline | None) -> None:
    while stack:
        up, here_name, fd, rel, it = stack[-1]
        found = next(it, None)
        if found is None:
            stack.pop()
            os.close(fd)
            os.rmdir(here_name, dir_fd=up)
            continue
        if deadline is not None:
            deadline.check()
        child = f"{rel}/{found.name}"
        try:
            sub = _open_writable(fd, found.name) if found.is_dir(follow_symlinks=False) else None
        except FileNotFoundError:
            continue
        except OSError as e:
            if e.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            sub = None  # swapped for a link or file since listed: unlink it below
        if sub is not None:
            stack.append((fd, found.name, sub, child, _list(sub, child)))
            gone.append(child + "/")
            continue
        with contextlib.suppress(FileNotFoundError):
            os.unlink(found.name, dir_fd=fd)
            gone.append(child)


def remove_path(path: Path | str, *, missing_ok: bool = True) -> None:
    """Remove a file or a whole folder tree at `path`, by descriptor (any depth, no link followed).

    Unlike shutil.rmtree, which recurses once per level and raises
    RecursionError on a tree ~1000 folders deep, this never runs out of stack.
    """
    path = Path(path)
    try:
        parent = open_root(path.parent)
    except WalkError:
        if missing_ok and not path.parent.exists():
            return
        raise
    try:
        if not remove_entry(parent, path.name) and not missing_ok:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path))
    finally:
        os.close(parent)


def _open_writable(parent: int, name: str) -> int:
    fd = os.open(name, DIR_FLAGS, dir_fd=parent)
    os.fchmod(fd, 0o700)  # read-only folders would block removal
    return fd


class Folders:
    """Descriptors of the folders leading to the entry being written, for building a tree in walk order.

    `parent(rel)` returns the descriptor of `rel`'s folder, opening each
    missing component relative to the one above with O_NOFOLLOW (and
    creating it, mode 0700, when `create`); folders the walk has left are
    closed, so any depth costs one descriptor per level. Use as a context manager.
    """

    def __init__(self, root: int, *, create: bool = False) -> None:
        self.root, self.create = root, create
        self.stack: list[tuple[str, int]] = [("", root)]

    def __enter__(self) -> Folders:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def parent(self, rel: str) -> int:
        """Descriptor of the folder holding `rel` (a `/`-joined relative name)."""
        want = rel.rpartition("/")[0]
        while self.stack[-1][0] and not (want == self.stack[-1][0] or want.startswith(self.stack[-1][0] + "/")):
            os.close(self.stack.pop()[1])
        have = self.stack[-1][0]
        rest = want[len(have):].lstrip("/")
        for part in rest.split("/") if rest else []:
            fd = self.stack[-1][1]
            if self.create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o700, dir_fd=fd)
            sub = os.open(part, DIR_FLAGS, dir_fd=fd)
            self.stack.append((f"{self.stack[-1][0]}/{part}".lstrip("/"), sub))
        return self.stack[-1][1]

    def close(self) -> None:
        """Close every descriptor opened here (never the root)."""
        while len(self.stack) > 1:
            os.close(self.stack.pop()[1])
