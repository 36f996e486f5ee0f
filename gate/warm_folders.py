"""The warm sides' scratch folders: is a folder still the one the sandbox started on, and filling one.

Why: a warm side is started while the run works and taken only at the
gate; in between, its folder must be shown untouched (`signature()`: inode,
mode, owner, size, mtime and ctime of every entry, taken once the sandbox
holds it) and the after side's empty folder is filled with the copy of the
final workspace at hand-over (`fill()`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tether.common.walk import DIR_FLAGS, open_root

Signature = dict[str, tuple[int, ...]]


def signature(root: Path) -> Signature | None:
    """Every entry below `root` (and `root` itself) by inode, mode, size, mtime and ctime; None if unreadable.

    Any write, rename, chmod or chown changes an entry's ctime, which no
    process can set back, so an equal signature means an untouched tree.
    Walked by descriptor with a stack (any depth, no link followed).
    """
    out: Signature = {}
    try:
        st = os.lstat(root)
        out[""] = stat_sig(st)
        stack = [("", open_root(root))]
        while stack:
            rel, fd = stack.pop()
            try:
                with os.scandir(fd) as it:
                    for entry in it:
                        sub = f"{rel}/{entry.name}" if rel else entry.name
                        est = entry.stat(follow_symlinks=False)
                        out[sub] = stat_sig(est)
                        if stat.S_ISDIR(est.st_mode):
                            stack.append((sub, os.open(entry.name, DIR_FLAGS, dir_fd=fd)))
            finally:
                os.close(fd)
    except OSError:
        return None
    return out


def stat_sig(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_ino, st.st_mode, st.st_uid, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except OSError:
        return True  # unknown: no warm side


def fill(folder: Path, files: Path) -> None:
    """Move the copy at `files` into the warm side's `folder` (same file system: renames), give `folder` the
    copy's mode, and give every entry to the folder's owner where the sandbox's start lent it to another user."""
    src, dst = open_root(files), open_root(folder)
    try:
        for name in os.listdir(src):
            os.rename(name, name, src_dir_fd=src, dst_dir_fd=dst)
        owner = os.fstat(dst)
        os.fchmod(dst, stat.S_IMODE(os.fstat(src).st_mode))
    finally:
        os.close(src)
        os.close(dst)
    if os.geteuid() == 0 and owner.st_uid != 0:  # lent: its new entries go to the same user
        _chown_tree(folder, owner.st_uid, owner.st_gid)


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    stack = [open_root(root)]
    while stack:
        fd = stack.pop()
        try:
            with os.scandir(fd) as it:
                for entry in it:
                    os.chown(entry.name, uid, gid, dir_fd=fd, follow_symlinks=False)
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(os.open(entry.name, DIR_FLAGS, dir_fd=fd))
        finally:
            os.close(fd)
