"""Hashes a run leaves for the next run of the same workspace, so an unchanged file is not read again.

The start manifest hashes every file; at 200k files that is most of a run's
host work. The last run's hashes are kept under Tether's home (never in the
workspace) in `cache/manifests/<key>.bin` (runtime.workspace.manifest_file:
the very bytes of the run's start manifest), the key being a hash of the
workspace's real path and device, and are reused exactly as the per-command
scans reuse theirs (common.manifest): only for a file whose stat (device,
inode, size, mode, mtime, ctime) is what it was when hashed. The kernel sets
ctime on every change to a file and no unprivileged process can set it back
(`touch -d` restores mtime, not ctime; a file made anew gets a fresh ctime
even on a recycled inode), so an unchanged stat means unchanged content.

Any doubt means hashing the file again, never trusting it: an entry whose
mtime or ctime is within `RACY_NS` of the cache's write time (or after it),
a cache written "in the future", another folder at the same path (its
device and inode), another `hash_max_bytes`, a cache file that is
unreadable, too big, damaged (its checksum) or malformed in any way (the
whole cache is dropped).
The cache is bounded (`MAX_ENTRIES` files per workspace, `MAX_WORKSPACES`
workspaces: the least recently written go first) and written atomically.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import time
from pathlib import Path

from tether.common.atomic import write_atomic
from tether.common.errors import StateFileError
from tether.common.manifest import RACY_NS, ManifestCache
from tether.runtime.workspace import manifest_file

log = logging.getLogger(__name__)

CACHE_DIR = Path("cache") / "manifests"
"""Under the Tether home."""
VERSION = 2
"""1 was JSON (`<key>.json`, no longer read)."""
MAX_ENTRIES = 1_000_000
"""Files kept per workspace; a bigger workspace keeps none (its next run hashes everything)."""
MAX_WORKSPACES = 16
"""Workspaces with a cache; writing one more removes the least recently written."""
MAX_FILE_BYTES = 256 << 20
"""A cache file larger than this is not read."""
SUFFIX = ".bin"


def cache_path(home: Path, workspace: Path) -> Path | None:
    """Where the workspace's cache lives; None when it cannot be placed safely (no reuse then).

    The key is the real path's bytes and the folder's device; a home inside
    the workspace gets no cache (the sandbox could write it).
    """
    try:
        real = Path(os.path.realpath(workspace))
        dev = os.stat(real).st_dev
        home_real = Path(os.path.realpath(home))
    except OSError:
        return None
    if home_real == real or real in home_real.parents:
        return None
    key = hashlib.sha256(os.fsencode(real) + b"\0" + str(dev).encode()).hexdigest()[:32]
    return home_real / CACHE_DIR / f"{key}{SUFFIX}"


def _root_id(workspace: Path) -> tuple[str, int, int]:
    real = os.path.realpath(workspace)
    st = os.stat(real)
    return real, st.st_dev, st.st_ino


def header(workspace: Path, hash_max_bytes: int, started_ns: int) -> dict:
    """What a manifest file must say to serve as this workspace's cache (the scan started at `started_ns`).

    The write time recorded is the scan's start, the earlier and safer of the
    two: the next load drops every entry changed within `RACY_NS` of it.
    """
    try:
        root, dev, ino = _root_id(workspace)
    except OSError:
        root, dev, ino = "", -1, -1  # cannot be a cache (load compares these with the folder's)
    return {"version": VERSION, "root": root, "dev": dev, "ino": ino, "hash_max_bytes": hash_max_bytes,
            "written_ns": started_ns}


def load(home: Path, workspace: Path, hash_max_bytes: int) -> ManifestCache:
    """The hashes the last run of `workspace` left (an empty cache on any doubt)."""
    cache = ManifestCache()
    path = cache_path(home, workspace)
    if path is None:
        return cache
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return cache
    try:
        with os.fdopen(fd, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            msg = "too big"
            raise ValueError(msg)
        cache.entries = _entries(raw, _root_id(workspace), hash_max_bytes, time.time_ns())
    except (OSError, ValueError) as e:
        log.info("not reusing the hash cache %s (%s): every file is hashed", path, e)
        cache.entries = {}
    return cache


def _entries(raw: bytes, root: tuple[str, int, int], hash_max_bytes: int, now: int) -> dict:
    """The usable entries of a cache file; raises ValueError when the cache as a whole is not to be trusted."""

    def select(head: dict) -> int:
        if head.get("version") != VERSION or head.get("hash_max_bytes") != hash_max_bytes:
            msg = "written with other settings"
            raise ValueError(msg)
        if (head.get("root"), head.get("dev"), head.get("ino")) != root:
            msg = "another folder at this path"
            raise ValueError(msg)
        written = head.get("written_ns")
        if type(written) is not int or written > now:
            msg = "written in the future: the clock moved back"
            raise ValueError(msg)
        return written - RACY_NS  # a file changed after this (close to the write, or after it) is hashed again

    return manifest_file.decode_entries(raw, select)[1]


def save(home: Path, workspace: Path, source: Path, data: bytes, count: int) -> None:
    """Keep `data` (a manifest file of `count` entries with `header()`'s fields) for the next run; never raises.

    `source` is the run's start manifest holding those very bytes: the cache
    becomes a second link to it (no second copy) where both are on one
    filesystem, else a copy.
    """
    path = cache_path(home, workspace)
    if path is None:
        return
    try:
        if count > MAX_ENTRIES:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
            return
        if not _link(source, path):
            write_atomic(path, data)
        _prune(path.parent)
    except (OSError, StateFileError, ValueError) as e:
        log.warning("could not keep the hash cache for %s (%s); the next run hashes every file", workspace, e)


def _link(source: Path, path: Path) -> bool:
    """Make `path` another name of `source`, atomically (False where a link cannot be made: another filesystem)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{os.getpid()}.{time.monotonic_ns()}"
    try:
        os.link(source, tmp, follow_symlinks=False)
    except OSError:
        return False
    try:
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False
    return True


def _prune(folder: Path) -> None:
    """Keep the `MAX_WORKSPACES` most recently written caches (and no stale temp files or old JSON caches)."""
    found = []
    for entry in os.scandir(folder):
        if entry.name.startswith("."):
            continue  # another writer's temp file
        if entry.name.endswith(".json"):  # version 1's, never read again
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)
            continue
        if not entry.name.endswith(SUFFIX):
            continue
        try:
            found.append((entry.stat(follow_symlinks=False).st_mtime_ns, entry.path))
        except FileNotFoundError:
            continue
    found.sort(reverse=True)
    for _, p in found[MAX_WORKSPACES:]:
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass
