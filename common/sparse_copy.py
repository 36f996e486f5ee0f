"""Copy a file so the copy costs what the original really holds: a reflink where the disk can, else its data only.

Why: a vector index (Qdrant's storage) is mostly holes, preallocated
segments of zeros the disk never stored; `shutil.copy2` writes every zero,
so each eval cell's copy of a 139 MB index took 139 MB. `copy_sparse` first
asks for a reflink (FICLONE: the copy shares the original's blocks until one
side writes), else copies each data extent (SEEK_DATA/SEEK_HOLE) with
`os.copy_file_range` (which may itself share blocks) and leaves the holes as
holes. It has the signature of shutil's `copy_function`.
"""

from __future__ import annotations

import errno
import os
import shutil

FICLONE = 0x40049409
"""ioctl(dest, FICLONE, src) on Linux (btrfs, XFS, bcachefs, overlay on those)."""
_NO_REFLINK = {errno.EOPNOTSUPP, errno.ENOTTY, errno.EXDEV, errno.EINVAL, errno.EPERM, errno.EBADF, errno.ENOSYS}


def _reflink(src: int, dst: int) -> bool:
    try:
        import fcntl

        fcntl.ioctl(dst, FICLONE, src)
    except (OSError, ImportError) as e:
        if isinstance(e, OSError) and e.errno not in _NO_REFLINK:
            raise
        return False
    return True


def _extents(fd: int, size: int) -> list[tuple[int, int]]:
    """(start, end) of each data extent; the whole file where the system cannot tell holes."""
    if not hasattr(os, "SEEK_DATA"):
        return [(0, size)]
    found: list[tuple[int, int]] = []
    at = 0
    try:
        while at < size:
            try:
                start = os.lseek(fd, at, os.SEEK_DATA)
            except OSError as e:
                if e.errno == errno.ENXIO:  # no data after `at`: the rest is a hole
                    break
                raise
            end = os.lseek(fd, start, os.SEEK_HOLE)
            found.append((start, min(end, size)))
            at = end
    except OSError as e:
        if e.errno in (errno.EINVAL, errno.EOPNOTSUPP):
            return [(0, size)]
        raise
    return found


def _copy_range(src: int, dst: int, start: int, end: int) -> None:
    at = start
    while at < end:
        try:
            n = os.copy_file_range(src, dst, end - at, at, at)
        except OSError as e:
            if e.errno not in (errno.EXDEV, errno.ENOSYS, errno.EOPNOTSUPP, errno.EINVAL):
                raise
            n = 0
        if n == 0:  # not supported here, or the file shrank: plain reads and writes
            os.lseek(src, at, os.SEEK_SET)
            os.lseek(dst, at, os.SEEK_SET)
            while at < end:
                chunk = os.read(src, min(1 << 20, end - at))
                if not chunk:
                    return
                os.write(dst, chunk)
                at += len(chunk)
            return
        at += n


def copy_sparse(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> str:
    """Copy `src` to `dst` (a reflink, else data extents only, holes kept), then its mode and times; `dst`.

    A symlink or anything not a regular file is copied by `shutil.copy2`.
    """
    if os.path.islink(src) or not os.path.isfile(src):
        return shutil.copy2(src, dst)
    if os.path.isdir(dst):
        dst = os.path.join(dst, os.path.basename(src))
    fin = os.open(src, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        size = os.fstat(fin).st_size
        fout = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            if not _reflink(fin, fout):
                for start, end in _extents(fin, size):
                    _copy_range(fin, fout, start, end)
                os.ftruncate(fout, size)
        finally:
            os.close(fout)
    finally:
        os.close(fin)
    shutil.copystat(src, dst)
    return str(dst)
