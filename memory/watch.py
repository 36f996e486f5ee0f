"""Whether anything in a few folders changed since the last look, without listing them (Linux inotify).

Parts: `FolderWatch` (`changed()` -> True when an entry of a watched folder
was created, written, renamed, deleted or had its attributes changed since the
last call, or when the watch cannot tell: overflow, a folder removed or moved).
`FolderWatch.start` returns None where inotify is missing (macOS, a sandboxed
libc, the per-user instance limit reached): the caller then lists the folders
each time, which is always correct, only slower.

Why: the memory store must notice a person's edit of any lesson or rule file
at the next session, and listing every file costs a stat per file; with a
watch the steady state (nothing edited) costs one non-blocking read.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
from pathlib import Path

_IN_MODIFY = 0x002
_IN_ATTRIB = 0x004
_IN_CLOSE_WRITE = 0x008
_IN_MOVED_FROM = 0x040
_IN_MOVED_TO = 0x080
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_Q_OVERFLOW = 0x4000
_IN_IGNORED = 0x8000
_IN_ONLYDIR = 0x01000000
_MASK = (_IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE
         | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR)
_LOST = _IN_Q_OVERFLOW | _IN_IGNORED | _IN_DELETE_SELF | _IN_MOVE_SELF
"""Events after which the watch no longer covers a folder (or lost events): report a change, re-arm."""
_NONBLOCK = os.O_NONBLOCK
_CLOEXEC = 0o2000000
_EVENT = struct.Struct("iIII")


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        lib = ctypes.CDLL(name or "libc.so.6", use_errno=True)
        lib.inotify_init1.argtypes, lib.inotify_init1.restype = [ctypes.c_int], ctypes.c_int
        lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        lib.inotify_add_watch.restype = ctypes.c_int
    except (OSError, AttributeError):
        return None
    return lib


class FolderWatch:
    """An inotify instance on a fixed set of folders (their direct entries)."""

    def __init__(self, lib: ctypes.CDLL, fd: int, folders: list[Path]) -> None:
        self._lib, self._fd, self.folders = lib, fd, folders
        self._armed = False

    @classmethod
    def start(cls, folders: list[Path]) -> FolderWatch | None:
        """A watch on `folders` (created when missing), or None where the platform has no inotify."""
        lib = _libc() if os.name == "posix" else None
        if lib is None:
            return None
        fd = lib.inotify_init1(_NONBLOCK | _CLOEXEC)
        if fd < 0:
            return None
        watch = cls(lib, fd, folders)
        if not watch._arm():
            watch.close()
            return None
        return watch

    def _arm(self) -> bool:
        for folder in self.folders:
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError:
                return False
            if self._lib.inotify_add_watch(self._fd, os.fsencode(folder), _MASK) < 0:
                return False
        self._armed = True
        return True

    def changed(self) -> bool:
        """True when something may have changed since the last call (every pending event is read)."""
        if self._fd < 0:
            return True
        changed, lost = False, not self._armed
        while True:
            try:
                data = os.read(self._fd, 64 * 1024)
            except BlockingIOError:
                break
            except OSError as e:
                if e.errno == errno.EINTR:
                    continue
                lost = True
                break
            if not data:
                break
            changed = True
            offset = 0
            while offset + _EVENT.size <= len(data):
                _, mask, _, length = _EVENT.unpack_from(data, offset)
                lost = lost or bool(mask & _LOST)
                offset += _EVENT.size + length
        if lost:  # a folder was replaced or events were dropped: watch the folders afresh
            self._armed = False
            self._arm()
        return changed or lost

    def close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)

    def __del__(self) -> None:  # a dropped store's watch gives its descriptor (and inotify instance) back
        self.close()
