"""Workspace manifests and diffs: what a run changed, computed from the files.

The completion gate and the memory read these diffs instead of trusting what
the model says it changed.

`manifest()` hashes every file; given a `ManifestCache` it re-hashes only the
files whose stat (device, inode, size, mode, mtime, ctime) changed since the
last manifest, like git's index. A file changed within `RACY_NS` of a scan is
not cached (it might change again within the same timestamp tick), so it is
hashed again next time.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, Field

SKIP_DIRS = frozenset({".git"})
RACY_NS = 2_000_000_000
"""Files modified less than this before a scan started are hashed again on the next scan."""


class FileState(BaseModel):
    """Content identity of one workspace entry."""

    sha256: str
    size: int
    mode: int
    link: str | None = None
    """Target when the entry is a symlink (its content is not followed)."""


class WorkspaceDiff(BaseModel):
    """Paths relative to the workspace root, sorted."""

    added: list[str] = Field(default_factory=list)
    modified: list[str] = Field(default_factory=list)
    deleted: list[str] = Field(default_factory=list)

    @property
    def changed(self) -> list[str]:
        """Every path that differs, in one sorted list."""
        return sorted({*self.added, *self.modified, *self.deleted})

    @property
    def empty(self) -> bool:
        return not (self.added or self.modified or self.deleted)


def _hash(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class ManifestCache:
    """Hashes of one workspace's files keyed by their stat; reuse it across scans of the same root."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[tuple[int, ...], FileState]] = {}
        self.hashed = 0
        """Files hashed (not reused) by scans with this cache, for benchmarks and tests."""


def _entries(root: str, skip_dirs: frozenset[str]) -> Iterator[tuple[str, str, os.stat_result]]:
    """(relative path, path, lstat) of every non-directory under `root`; what os.walk would list.

    Directories named in `skip_dirs` (and symlinks to directories so named)
    are left out; unreadable directories are skipped, as os.walk does.
    """
    stack = [("", root)]
    while stack:
        prefix, top = stack.pop()
        try:
            with os.scandir(top) as it:
                found = list(it)
        except OSError:
            continue
        for entry in found:
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                if entry.name not in skip_dirs:
                    stack.append((f"{prefix}{entry.name}/", entry.path))
            elif not (entry.name in skip_dirs and stat.S_ISLNK(st.st_mode) and entry.is_dir()):
                yield prefix + entry.name, entry.path, st


def manifest(root: Path, skip_dirs: frozenset[str] = SKIP_DIRS, cache: ManifestCache | None = None) -> dict[str, FileState]:
    """Hash every regular file and symlink under `root` (not following links).

    With `cache`, a regular file whose stat is unchanged since a scan that
    started more than `RACY_NS` after its last change is not read again.
    """
    states: dict[str, FileState] = {}
    started = time.time_ns()
    keep: dict[str, tuple[tuple[int, ...], FileState]] = {}
    old = cache.entries if cache is not None else {}
    for rel, path, st in _entries(str(root), skip_dirs):
        if stat.S_ISLNK(st.st_mode):
            target = os.readlink(path)
            states[rel] = FileState(sha256=hashlib.sha256(target.encode()).hexdigest(), size=0, mode=st.st_mode, link=target)
        elif stat.S_ISREG(st.st_mode):
            sig = (st.st_dev, st.st_ino, st.st_size, st.st_mode, st.st_mtime_ns, st.st_ctime_ns)
            hit = old.get(rel)
            if hit is not None and hit[0] == sig:
                state = hit[1]
            else:
                state = FileState(sha256=_hash(path), size=st.st_size, mode=st.st_mode)
                if cache is not None:
                    cache.hashed += 1
            states[rel] = state
            if cache is not None and max(st.st_mtime_ns, st.st_ctime_ns) < started - RACY_NS:
                keep[rel] = (sig, state)
    if cache is not None:
        cache.entries = keep
    return states


def diff(before: dict[str, FileState], after: dict[str, FileState]) -> WorkspaceDiff:
    """Added, modified (content, mode or link target) and deleted paths."""
    return WorkspaceDiff(
        added=sorted(after.keys() - before.keys()),
        modified=sorted(p for p in before.keys() & after.keys() if before[p] is not after[p] and before[p] != after[p]),
        deleted=sorted(before.keys() - after.keys()),
    )
