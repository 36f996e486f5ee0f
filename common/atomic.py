"""The one crash-safe file writer: readers see the old file or the new one, never a mix.

Parts: `write_atomic()` (temp file in the same folder, write, fsync the file,
rename over the target, fsync the folder) and `fsync_dir()`. Every state
file (run.json, trust.toml, memory markdown, ledgers) is written through it.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from tether.common.errors import StateFileError


def write_atomic(path: Path, data: str | bytes, *, mode: int | None = None, durable: bool = True) -> None:
    """Replace `path` with `data` (text is written as UTF-8) atomically and durably.

    Args:
        path: the file to replace; its folder is created when missing.
        data: the whole new content.
        mode: permission bits for the new file (default 0o600: state is private).
        durable: fsync the file and its folder (the default). False keeps the atomic replace (readers still see
            the old file or the new one) without waiting for the disk: only for state whose last change may be
            lost in a power cut without harm (the hook's pending asks, rewritten on every agent call).

    Raises:
        StateFileError: the folder is not writable, the disk is full, or the target
            cannot be replaced; the message names the file and the fix.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _temp_beside(path)
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            if mode is not None:
                os.fchmod(fh.fileno(), mode)
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
        tmp = None
        if durable:
            fsync_dir(path.parent)
    except OSError as e:
        msg = f"cannot write {path}: {e.strerror or e}; check that folder's permissions and free space"
        raise StateFileError(msg) from e
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _temp_beside(path: Path) -> tuple[int, str]:
    """A new private file in `path`'s folder, as `tempfile.mkstemp` makes one (O_EXCL, 0600, no link followed),
    without importing tempfile (~4 ms of every `tether hook` call that records something)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        name = os.path.join(path.parent, f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(name, flags, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(os.path.join(path.parent, f".{path.name}.*.tmp"))


def fsync_dir(folder: Path) -> None:
    """Make a rename or a new file in `folder` durable (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
