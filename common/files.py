"""Reading a person's or Tether's own file as text, with one way of saying why it failed.

`read_text(path, error, fix)` returns the file's UTF-8 text; a missing or
unreadable file, text that is not UTF-8, or a file over `max_bytes` raises
`error` with one line that names the file, what is wrong and `fix`.
`unreadable()` builds that same error for readers that stream a file.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from tether.common.errors import TetherError


def open_regular(path: Path, flags: int = os.O_RDONLY, mode: int = 0o600) -> int:
    """A descriptor of `path` when it is a regular file (never a FIFO, device or symlink, which would block or
    lead elsewhere); OSError otherwise. Tether's own state files may be swapped by anyone who shares the home."""
    fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path: Path, max_bytes: int) -> bytes:
    """At most `max_bytes` + 1 bytes of the regular file `path` (OSError when it is not one)."""
    with os.fdopen(open_regular(path), "rb") as fh:
        return fh.read(max_bytes + 1)


def unreadable(path: Path, e: OSError | UnicodeDecodeError, error: type[TetherError], fix: str) -> TetherError:
    """The one-line error for a file that could not be read or decoded."""
    if isinstance(e, UnicodeDecodeError):
        return error(f"{path} is not UTF-8 text (byte {e.start}); {fix}")
    return error(f"cannot read {path}: {e.strerror or e}; {fix}")


def read_text(path: Path, error: type[TetherError], fix: str, *, max_bytes: int | None = None) -> str:
    """The UTF-8 text of `path`; `error` (one line naming the file and `fix`) when it cannot be had."""
    try:
        with os.fdopen(open_regular(path), "rb") as fh:
            data = fh.read() if max_bytes is None else fh.read(max_bytes + 1)
        if max_bytes is not None and len(data) > max_bytes:
            msg = f"{path} is larger than {max_bytes} bytes; {fix}"
            raise error(msg)
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise unreadable(path, e, error, fix) from e
