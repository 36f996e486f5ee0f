"""Hashes a run leaves for the next run of the same workspace, so an unchanged file is not read again.

The start manifest hashes every file; at 200k files that is most of a run's
host work. The last run's hashes are kept under Tether's home (never in the
workspace) in `cache/manifests/<key>.json`, the key being a hash of the
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
unreadable, too big or malformed in any way (the whole cache is dropped).
The cache is bounded (`MAX_ENTRIES` files per workspace, `MAX_WORKSPACES`
workspaces: the least recently written go first) and written atomically.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from pathlib import Path

from tether.common.atomic import write_atomic
from tether.common.errors import StateFileError
from tether.common.manifest import RACY_NS, FileState, ManifestCache

log = logging.getLogger(__name__)

CACHE_DIR = Path("cache") / "manifests"
"""Under the Tether home."""
VERSION = 1
MAX_ENTRIES = 1_000_000
"""Files kept per workspace; a bigger workspace keeps none (its next run hashes everything)."""
MAX_WORKSPACES = 16
"""Workspaces with a cache; writing one more removes the least recently written."""
MAX_FILE_BYTES = 256 << 20
"""A cache file larger than this is not read."""
_HEX = frozenset("0123456789abcdef")


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
    return home_real / CACHE_DIR / f"{key}.json"


def _root_id(workspace: Path) -> tuple[str, int, int]:
    real = os.path.realpath(workspace)
    st = os.stat(real)
    return real, st.st_dev, st.st_ino


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
        data = json.loads(raw)
        cache.entries = _entries(data, _root_id(workspace), hash_max_bytes, time.time_ns())
    except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError) as e:
        log.info("not reusing the hash cache %s (%s): every file is hashed", path, e)
        cache.entries = {}
    return cache


def _entries(data: dict, root: tuple[str, int, int], hash_max_bytes: int, now: int
             ) -> dict[str, tuple[tuple[int, ...], FileState]]:
    """The usable entries of a parsed cache; raises ValueError when the cache as a whole is not to be trusted."""
    if data["version"] != VERSION or data["hash_max_bytes"] != hash_max_bytes:
        msg = "written with other settings"
        raise ValueError(msg)
    if (data["root"], data["dev"], data["ino"]) != root:
        msg = "another folder at this path"
        raise ValueError(msg)
    written = data["written_ns"]
    if not isinstance(written, int) or written > now:
        msg = "written in the future: the clock moved back"
        raise ValueError(msg)
    out: dict[str, tuple[tuple[int, ...], FileState]] = {}
    racy = written - RACY_NS
    for rel, dev, ino, size, mode, mtime, ctime, sha in data["entries"]:
        if not (type(rel) is str and type(dev) is int and type(ino) is int and type(size) is int
                and type(mode) is int and type(mtime) is int and type(ctime) is int):
            msg = "malformed entry"
            raise ValueError(msg)
        if type(sha) is not str or len(sha) != 64 or not _HEX.issuperset(sha):
            msg = "malformed hash"
            raise ValueError(msg)
        if mtime >= racy or ctime >= racy:
            continue  # changed too close to the write (or after it): hash it again
        out[rel] = ((dev, ino, size, mode, mtime, ctime), FileState(sha256=sha, size=size, mode=mode))
    return out


def _unchanged(loaded: dict[str, tuple[tuple[int, ...], FileState]],
               now: dict[str, tuple[tuple[int, ...], FileState]]) -> bool:
    """Whether a scan's entries are exactly the loaded ones (same files, same stats: the file on disk still holds)."""
    if len(loaded) != len(now):
        return False
    for rel, (sig, _) in now.items():
        was = loaded.get(rel)
        if was is None or was[0] != sig:
            return False
    return True


def save(home: Path, workspace: Path, cache: ManifestCache, hash_max_bytes: int, started_ns: int,
         loaded: dict[str, tuple[tuple[int, ...], FileState]] | None = None) -> None:
    """Keep `cache` (the entries of a scan that started at `started_ns`) for the next run; never raises.

    The write time recorded is the scan's start, the earlier and safer of
    the two: the next load drops every entry changed within `RACY_NS` of it.
    When the entries are exactly `loaded` (what `load()` gave this scan), the
    file is left as it is (only marked recent): rewriting it costs seconds at
    200k files and would say nothing new.
    """
    path = cache_path(home, workspace)
    if path is None:
        return
    try:
        if loaded is not None and loaded and _unchanged(loaded, cache.entries):
            os.utime(path)
            return
        root, dev, ino = _root_id(workspace)
        rows = [[rel, *sig, state.sha256] for rel, (sig, state) in cache.entries.items() if state.link is None]
        if len(rows) > MAX_ENTRIES:
            rows = []
        text = json.dumps({"version": VERSION, "root": root, "dev": dev, "ino": ino, "hash_max_bytes": hash_max_bytes,
                           "written_ns": started_ns, "entries": rows}, separators=(",", ":"))
        write_atomic(path, text)
        _prune(path.parent)
    except (OSError, StateFileError, ValueError) as e:
        log.warning("could not keep the hash cache for %s (%s); the next run hashes every file", workspace, e)


def _prune(folder: Path) -> None:
    """Keep the `MAX_WORKSPACES` most recently written caches (and no stale temp files)."""
    found = []
    for entry in os.scandir(folder):
        if entry.name.startswith(".") or not entry.name.endswith(".json"):
            continue  # another writer's temp file
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
