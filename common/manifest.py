"""Workspace manifests and diffs: what a run changed, computed from the files.

The completion gate and the memory read these diffs instead of trusting what
the model says it changed.

`scan()` walks the workspace by file descriptor (common.walk: no symlink
followed, no FIFO opened, any depth) and hashes every regular file's data,
reading at most `hash_max_bytes` of it and skipping holes; it also totals the
apparent and allocated bytes for the size limits. Given a `ManifestCache` it
re-hashes only the files whose stat (device, inode, size, mode, mtime, ctime)
changed since the last scan, like git's index: the kernel sets ctime on every
change and no unprivileged process can set it back, so an unchanged stat
means unchanged content. A file changed within `RACY_NS` of a scan is not
cached (it might change again within the same timestamp tick).

Names are surrogate-escaped `str` (see common.walk); `shown()` turns them into
text for the journal, the gate and people.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG

from pydantic import BaseModel, Field

from tether.common.gc_pause import gc_paused
from tether.common.hostexec import kept_in_git
from tether.common.limits import WorkspaceLimits
from tether.common.walk import Deadline, hash_file, open_regular, open_root, read_link, shown, walk_folders

SKIP_DIRS = frozenset({".git"})
"""Folders whose content is left out of manifests, except what git runs or reads as config there (its config,
hooks, attributes and rebase plans: common.hostexec.GIT_TAIL); the object store, refs and logs are data."""
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

    def shown(self) -> WorkspaceDiff:
        """The same diff with every name as valid text (for JSON, the gate and people)."""
        return WorkspaceDiff(added=[shown(p) for p in self.added], modified=[shown(p) for p in self.modified],
                             deleted=[shown(p) for p in self.deleted])


class ManifestCache:
    """Hashes of one workspace's files keyed by their stat; reuse it across scans of the same root."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[tuple[int, ...], FileState]] = {}
        self.hashed = 0
        """Files hashed (not reused) by scans with this cache, for benchmarks and tests."""


@dataclass
class Scan:
    """One pass over the workspace: its manifest and its size."""

    states: dict[str, FileState] = field(default_factory=dict)
    apparent: int = 0
    """Sum of file sizes, holes included (`.git` too)."""
    allocated: int = 0
    """Bytes the entries take on disk (`.git` too)."""
    generation: int = 0
    """For scans from a live tree (runtime.workspace.live): which refresh made it; `states` is then
    a live view, and diffs come from the refreshes' change lists. 0 for a full walk."""

    def over_limit(self, limits: WorkspaceLimits) -> str | None:
        """A message for the model when the workspace is larger than the limits allow."""
        if self.apparent > limits.max_bytes:
            over = human_bytes(self.apparent - limits.max_bytes)
            return (f"the workspace now holds {human_bytes(self.apparent)} of files (holes included), {over} over "
                    f"the limit of {human_bytes(limits.max_bytes)} (workspace.max_bytes); delete or shrink what this "
                    "command made")
        if self.allocated > limits.max_allocated_bytes:
            return (f"the workspace now takes {human_bytes(self.allocated)} on disk, "
                    f"{human_bytes(self.allocated - limits.max_allocated_bytes)} over the limit of "
                    f"{human_bytes(limits.max_allocated_bytes)} (workspace.max_allocated_bytes); delete what this "
                    "command made")
        return None


def human_bytes(n: int) -> str:
    """`n` bytes in the largest binary unit that keeps three significant figures (`512 B`, `1.50 MiB`, `3.00 GiB`)."""
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= size:
            value = n / size
            return f"{value:.3g} {unit}" if value >= 100 else f"{value:.2f} {unit}".replace(".00 ", " ")
    return f"{n} B"


def scan(root: Path, limits: WorkspaceLimits | None = None, cache: ManifestCache | None = None,
         skip_dirs: frozenset[str] = SKIP_DIRS, what: str = "workspace manifest") -> Scan:
    """Hash every regular file and symlink under `root` (not following links); total its size.

    The content of folders named in `skip_dirs` is left out of the manifest
    (but counted in the totals), except the paths `left_out()` keeps. With
    `cache`, a regular file whose stat is unchanged since a scan that
    started more than `RACY_NS` after its last change is not read again.

    Raises:
        WalkError: past `limits.host_pass_seconds`, deeper than `limits.max_depth`, or unreadable.
    """
    with gc_paused():  # hundreds of thousands of objects that all stay alive: no cycles to look for
        return _scan(root, limits or WorkspaceLimits(), cache, skip_dirs, what)


def _scan(root: Path, limits: WorkspaceLimits, cache: ManifestCache | None, skip_dirs: frozenset[str], what: str
          ) -> Scan:
    deadline = Deadline(limits.host_pass_seconds, what)
    out = Scan()
    started = time.time_ns()
    cutoff = started - RACY_NS
    keep: dict[str, tuple[tuple[int, ...], FileState]] = {}
    known = cache.entries if cache is not None else {}
    states = out.states
    apparent = allocated_bytes = 0
    top = open_root(root)
    try:
        for folder in walk_folders(top, max_depth=limits.max_depth, deadline=deadline, what=what):
            if folder.st is not None and folder.rel:  # the root itself is not counted
                allocated_bytes += folder.st.st_blocks * 512
            prefix = f"{folder.rel}/" if folder.rel else ""
            inside = skip_depth(prefix, skip_dirs)
            for name, st in folder.files:
                length = st.st_size
                apparent += length
                allocated_bytes += st.st_blocks * 512
                rel = prefix + name
                if inside is not None and not kept_in_git(rel[inside:]):
                    continue
                mode = st.st_mode
                if S_ISREG(mode):
                    sig = (st.st_dev, st.st_ino, length, mode, st.st_mtime_ns, st.st_ctime_ns)
                    hit = known.get(rel)
                    if hit is not None and hit[0] == sig:
                        state = hit[1]
                    else:
                        hit = None
                        state = state_of(folder.fd, name, rel, st, limits, deadline, cache)
                        if state is None:
                            continue
                    states[rel] = state
                    if cache is not None and sig[4] < cutoff and sig[5] < cutoff:  # a regular file: no link
                        keep[rel] = hit or (sig, state)
                    continue
                state = state_of(folder.fd, name, rel, st, limits, deadline, cache)
                if state is not None:
                    states[rel] = state
    finally:
        os.close(top)
    out.apparent, out.allocated = apparent, allocated_bytes
    if cache is not None:
        cache.entries = keep
    return out


def skip_depth(prefix: str, skip_dirs: frozenset[str]) -> int | None:
    """For a folder's `prefix`: where the path below its first skipped folder starts (None: not inside one)."""
    if not prefix or not any(d in prefix for d in skip_dirs):
        return None
    at = 0
    for part in prefix[:-1].split("/"):
        at += len(part) + 1
        if part in skip_dirs:
            return at
    return None


def left_out(rel: str, skip_dirs: frozenset[str] = SKIP_DIRS) -> bool:
    """Whether `rel` is inside a skipped folder and not one of the paths kept there."""
    parts = rel.split("/")
    for i, part in enumerate(parts[:-1]):
        if part in skip_dirs:
            return not kept_in_git("/".join(parts[i + 1:]))
    return False


def _sig(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mode, st.st_mtime_ns, st.st_ctime_ns)


def state_of(parent: int, name: str, rel: str, st: os.stat_result, limits: WorkspaceLimits,
             deadline: Deadline | None, cache: ManifestCache | None) -> FileState | None:
    """Content identity of one non-folder entry; None for FIFOs, sockets and devices, or if it changed kind."""
    if stat.S_ISLNK(st.st_mode):
        target = read_link(parent, name)
        if target is None:
            return None
        return FileState(sha256=hashlib.sha256(os.fsencode(target)).hexdigest(), size=0, mode=st.st_mode, link=target)
    if not stat.S_ISREG(st.st_mode):
        return None
    hit = cache.entries.get(rel) if cache is not None else None
    if hit is not None and hit[0] == _sig(st):
        return hit[1]
    got = open_regular(parent, name)
    if got is None:  # replaced since listed by something that is not a file
        return None
    fd, now = got
    try:
        digest = hash_file(fd, now, limits.hash_max_bytes, deadline)
    finally:
        os.close(fd)
    if cache is not None:
        cache.hashed += 1
    return FileState(sha256=digest, size=now.st_size, mode=now.st_mode)


def manifest(root: Path, skip_dirs: frozenset[str] = SKIP_DIRS, cache: ManifestCache | None = None,
             limits: WorkspaceLimits | None = None) -> dict[str, FileState]:
    """Just the manifest of `scan()`: relative name -> content identity."""
    return scan(root, limits, cache, skip_dirs).states


def diff(before: dict[str, FileState], after: dict[str, FileState]) -> WorkspaceDiff:
    """Added, modified (content, mode or link target) and deleted paths."""
    return WorkspaceDiff(
        added=sorted(after.keys() - before.keys()),
        modified=sorted(p for p in before.keys() & after.keys() if before[p] is not after[p] and before[p] != after[p]),
        deleted=sorted(before.keys() - after.keys()),
    )
