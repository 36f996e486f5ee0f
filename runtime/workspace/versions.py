"""One path's version in one tree, and whether two versions are the same: the atoms of rollback and apply.

Parts: `Version` (type, mode, link target, size, content hash, stat
signature), `Located` (a version and the tree its bytes can be read from),
`look()` (the version at a path now, by descriptor), `FolderChain` (the
same for many paths of one tree, without walking from its root for each),
`matches()` and `describe()`.

Everything goes by file descriptor below a root opened with O_NOFOLLOW
(common.walk): a symlink on the way is never followed; a path whose folder
is a symlink or a file now is *blocked* and reads as absent. Names are
surrogate-escaped `str` (their exact bytes with `os.fsencode`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from tether.common.snapshot import stat_sig
from tether.common.walk import (
    CHUNK,
    DIR_FLAGS,
    Deadline,
    data_segments,
    hash_file,
    open_regular,
    open_root,
    read_link,
    shown,
)

Kind = Literal["file", "dir", "symlink", "fifo", "other"]


class Version(BaseModel):
    """One path's state in one tree (a file's bytes are named by its hash, its stat, or the tree it lies in)."""

    type: Kind
    mode: int = 0
    """Permission bits (`stat.S_IMODE`)."""
    target: str | None = None
    """Symlinks: the target (surrogate-escaped)."""
    size: int | None = None
    sha256: str | None = None
    """Files: `common.walk.hash_file` with the cap in `RunChanges.hash_cap` (past it, stat joins the digest)."""
    sig: list[int] | None = None
    """Files: (device, inode, size, mtime, ctime) when recorded (common.snapshot.stat_sig)."""
    sig_proves: bool = False
    """An equal stat later proves equal bytes: nobody could write the file in the clock tick it was recorded in."""
    mtime_ns: int | None = None


@dataclass
class Located:
    """A version and where its bytes are: a tree's root (None: only `sha256` names them)."""

    version: Version | None
    root: Path | None = None
    rel: str = ""


@contextlib.contextmanager
def opened(root: Path) -> Iterator[int]:
    """A descriptor of a tree's root folder (a symlink is refused), closed after."""
    fd = open_root(root)
    try:
        yield fd
    finally:
        os.close(fd)


def parent_fd(root: int, rel: str) -> tuple[int | None, str]:
    """A new descriptor of `rel`'s folder, or (None, the first component that is missing or not a real folder)."""
    fd = os.dup(root)
    parts = rel.split("/")[:-1]
    for i, part in enumerate(parts):
        try:
            sub = os.open(part, DIR_FLAGS, dir_fd=fd)
        except OSError as e:
            os.close(fd)
            if e.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
                return None, "/".join(parts[: i + 1])
            raise
        os.close(fd)
        fd = sub
    return fd, ""


class FolderChain:
    """Descriptors of the folders down to the last one asked for, so paths visited near each other cost one open.

    Why: `parent_fd` walks from the root each time, and a plan over a tree
    N deep asks for N paths of depth up to N: N² opens (a 2000-deep tree took
    minutes). The chain keeps the folders leading to the last path (each opened
    below the one above with O_NOFOLLOW, as `parent_fd` does), drops what the
    next path does not share, and keeps at most `keep` descriptors (past that
    it forgets the shallowest and walks from the root again when it must). For
    reading a tree that is not being changed by its user (planning); the
    writer looks again, afresh, before it touches anything.
    """

    def __init__(self, root: int, keep: int = 64) -> None:
        self.root, self.keep = root, keep
        self._chain: list[tuple[str, int]] = []
        """(folder rel, descriptor), each folder the one below the entry before it."""

    def __enter__(self) -> FolderChain:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def folder(self, want: str) -> tuple[int | None, str]:
        """A borrowed descriptor of folder `want` ("" is the root; the caller must not close it), or (None, the first
        component that is missing or not a real folder)."""
        if not want:
            return self.root, ""
        chain = self._chain
        while chain and not (want == chain[-1][0] or want.startswith(chain[-1][0] + "/")):
            os.close(chain.pop()[1])
        have, fd = chain[-1] if chain else ("", self.root)
        rest = want[len(have):].lstrip("/") if have else want
        for part in rest.split("/") if rest else []:
            try:
                sub = os.open(part, DIR_FLAGS, dir_fd=fd)
            except OSError as e:
                if e.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
                    return None, f"{have}/{part}" if have else part
                raise
            have = f"{have}/{part}" if have else part
            chain.append((have, sub))
            fd = sub
            if len(chain) > self.keep:
                os.close(chain.pop(0)[1])
        return fd, ""

    def look(self, rel: str) -> tuple[Version | None, str]:
        """As `look()`: the version at `rel` now (None when absent), and the folder that blocks it."""
        folder, _, name = rel.rpartition("/")
        parent, blocked = self.folder(folder)
        if parent is None:
            return None, blocked
        try:
            st = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            return None, ""
        return of_stat(st, parent, name), ""

    def close(self) -> None:
        """Close every descriptor opened here (never the root)."""
        while self._chain:
            os.close(self._chain.pop()[1])


def of_stat(st: os.stat_result, parent: int, name: str) -> Version:
    """The version an lstat shows (files: size and stat signature; links: target)."""
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISDIR(st.st_mode):
        return Version(type="dir", mode=mode)
    if stat.S_ISLNK(st.st_mode):
        return Version(type="symlink", mode=mode, target=read_link(parent, name))
    if stat.S_ISFIFO(st.st_mode):
        return Version(type="fifo", mode=mode)
    if stat.S_ISREG(st.st_mode):
        return Version(type="file", mode=mode, size=st.st_size, sig=stat_sig(st), mtime_ns=st.st_mtime_ns)
    return Version(type="other", mode=mode)


def look(root: int, rel: str) -> tuple[Version | None, str]:
    """The version at `rel` now (None when absent), and the folder that blocks it ("" when none)."""
    parent, blocked = parent_fd(root, rel)
    if parent is None:
        return None, blocked
    try:
        st = os.stat(rel.rpartition("/")[2], dir_fd=parent, follow_symlinks=False)
        return of_stat(st, parent, rel.rpartition("/")[2]), ""
    except FileNotFoundError:
        return None, ""
    finally:
        os.close(parent)


def open_file(root: Path, rel: str) -> tuple[int, os.stat_result] | None:
    """A read descriptor of the regular file at `rel` under `root`, by descriptor; None if it is not one."""
    try:
        top = open_root(root)
    except OSError:
        return None
    try:
        parent, _ = parent_fd(top, rel)
    finally:
        os.close(top)
    if parent is None:
        return None
    try:
        return open_regular(parent, rel.rpartition("/")[2])
    finally:
        os.close(parent)


def content_hash(loc: Located, cap: int, deadline: Deadline | None) -> str | None:
    """The file's hash as `Version.sha256` has it: recorded, or computed from its tree."""
    if loc.version is not None and loc.version.sha256:
        return loc.version.sha256
    if loc.root is None:
        return None
    got = open_file(loc.root, loc.rel)
    if got is None:
        return None
    try:
        return hash_file(got[0], got[1], cap, deadline)
    finally:
        os.close(got[0])


def same_bytes(a: Located, b: Located, deadline: Deadline | None) -> bool | None:
    """Whether two files in trees hold the same bytes (holes read as zeros); None when one cannot be read."""
    if a.root is None or b.root is None:
        return None
    fa = open_file(a.root, a.rel)
    if fa is None:
        return None
    try:
        fb = open_file(b.root, b.rel)
        if fb is None:
            return None
        try:
            return fa[1].st_size == fb[1].st_size and _equal(fa[0], fb[0], fa[1].st_size, deadline)
        finally:
            os.close(fb[0])
    finally:
        os.close(fa[0])


def _equal(a: int, b: int, size: int, deadline: Deadline | None) -> bool:
    """Compare where either file holds data; where both have holes both read as zeros (a 15 TiB hole costs nothing)."""
    ranges = sorted([*data_segments(a, size), *data_segments(b, size)])
    merged: list[list[int]] = []
    for off, length in ranges:
        if merged and off <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], off + length)
        else:
            merged.append([off, off + length])
    for start, stop in merged:
        pos = start
        while pos < stop:
            if deadline is not None:
                deadline.check()
            n = min(CHUNK, stop - pos)
            x, y = os.pread(a, n, pos), os.pread(b, n, pos)
            if x != y:
                return False
            if not x:
                break
            pos += len(x)
    return True


def matches(now: Located, want: Located, cap: int, deadline: Deadline | None = None) -> bool:
    """Whether `now` is the version `want` describes: type, mode, link target and bytes."""
    a, b = now.version, want.version
    if a is None or b is None:
        return a is None and b is None
    if a.type != b.type or a.type == "other":
        return False
    if a.type == "symlink":
        return a.target == b.target
    if a.mode != b.mode:
        return False
    if a.type != "file":
        return True
    if a.size is not None and b.size is not None and a.size != b.size:
        return False
    if a.sig and b.sig and a.sig == b.sig and (a.sig_proves or b.sig_proves):
        return True
    same = same_bytes(now, want, deadline)
    if same is not None:
        return same
    ha, hb = content_hash(now, cap, deadline), content_hash(want, cap, deadline)
    return ha is not None and ha == hb


def describe(v: Version | None) -> str:
    """A few words for people: `file (12 bytes, mode 644)`, `folder`, `symlink -> x`, `absent`."""
    if v is None:
        return "absent"
    if v.type == "file":
        return f"file ({v.size if v.size is not None else '?'} bytes, mode {v.mode:o})"
    if v.type == "symlink":
        return f"symlink -> {shown(v.target or '')}"
    if v.type == "dir":
        return f"folder (mode {v.mode:o})"
    return "FIFO" if v.type == "fifo" else "a socket or device"
