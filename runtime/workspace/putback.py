"""Putting single workspace paths back as they were before a run, or removing them, by file descriptor.

Parts: `put_back(workspace, snapshot_files, rel, was)`: `was` None removes
what the run added; a file's state restores its bytes (from the snapshot)
and mode; a symlink's restores the link. Then `state_now()` says what the
path is now, so a caller checks the result instead of trusting it. Every
folder on the way is opened with O_NOFOLLOW from the workspace root: a
folder the run swapped for a symlink makes the put-back fail, never lead it
out of the workspace. Used by the after-run phase to undo the changes that
would run on the host (runtime.run.settle).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from tether.common.limits import WorkspaceLimits
from tether.common.manifest import FileState, state_of
from tether.common.walk import DIR_FLAGS, open_root, read_rel, remove_entry

MAX_PUT_BACK_BYTES = 64 << 20
"""A file larger than this is not put back by the after-run phase (it stays listed for review)."""


def _parent(root: int, rel: str, create: bool) -> int:
    """Descriptor of `rel`'s folder, each component opened without following links (created when asked)."""
    fd = root
    for part in rel.split("/")[:-1]:
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o755, dir_fd=fd)
        sub = os.open(part, DIR_FLAGS, dir_fd=fd)
        if fd != root:
            os.close(fd)
        fd = sub
    return fd


def put_back(workspace: Path, snapshot_files: Path | None, rel: str, was: FileState | None) -> None:
    """Make `rel` what it was before the run (`was`), or remove it when it did not exist.

    Raises:
        OSError: a folder on the way is not a folder (or a symlink), the snapshot copy is missing, or I/O failed.
    """
    root = open_root(workspace)
    try:
        parent = _parent(root, rel, create=was is not None)
        try:
            name = rel.rsplit("/", 1)[-1]
            if was is None:
                remove_entry(parent, name)
                return
            if was.link is not None:
                tmp = f".{name}.tether-{secrets.token_hex(4)}"
                os.symlink(os.fsencode(was.link), tmp, dir_fd=parent)
                os.rename(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
                return
            data = read_rel(snapshot_files, rel, MAX_PUT_BACK_BYTES + 1) if snapshot_files else None
            if data is None or len(data) > MAX_PUT_BACK_BYTES or len(data) != was.size:
                msg = f"no usable pre-run copy of {rel}"
                raise FileNotFoundError(msg)
            _write(parent, name, data, stat.S_IMODE(was.mode))
        finally:
            if parent != root:
                os.close(parent)
    finally:
        os.close(root)


def _write(parent: int, name: str, data: bytes, mode: int) -> None:
    """Write `data` to a new file beside `name` and rename it over (a folder there is removed first)."""
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISDIR(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode):
            remove_entry(parent, name)
    tmp = f".{name}.tether-{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=parent)
    try:
        os.write(fd, data)
        os.fchmod(fd, mode)
    finally:
        os.close(fd)
    os.rename(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)


def state_now(workspace: Path, rel: str, limits: WorkspaceLimits) -> FileState | None:
    """What `rel` is now (None when absent or not a file or link), read by descriptor."""
    try:
        root = open_root(workspace)
    except OSError:
        return None
    try:
        parent = _parent(root, rel, create=False)
    except OSError:
        os.close(root)
        return None
    try:
        name = rel.rsplit("/", 1)[-1]
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
        return state_of(parent, name, rel, st, limits, None, None)
    except OSError:
        return None
    finally:
        if parent != root:
            os.close(parent)
        os.close(root)
