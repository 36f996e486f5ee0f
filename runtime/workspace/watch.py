"""The runner's view of one run's workspace: its manifest before, around each command, and at the gate.

Parts: `WorkspaceWatch` (the per-command scans, sharing one stat-keyed hash
cache, the changed names as journal-safe text, and the size-limit message
the model sees; it is the graph's `CommandWatch`), and `save_start`/`load_start` (the manifest taken before
the run, kept in the run folder so a resumed run diffs against the same one).

Every pass is bounded by `workspace.host_pass_seconds`; past it a WalkError
(a TetherError) stops the run as `failed` with the reason.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from dataclasses import replace
from pathlib import Path

from tether.common.atomic import write_atomic
from tether.common.gc_pause import gc_paused
from tether.common.limits import WorkspaceLimits
from tether.common.manifest import RACY_NS, FileState, ManifestCache, Scan, diff, scan
from tether.common.walk import shown
from tether.gate.scan import ChangeTracker
from tether.runtime.workspace import hash_cache, manifest_file
from tether.runtime.workspace.live import LiveTree, NotifyError

START_MANIFEST = "start_manifest.bin"
"""The manifest taken before the run and the stat of each file hashed for it (lets the run's first scan reuse
those hashes): runtime.workspace.manifest_file."""
OLD_START_MANIFEST, OLD_START_STATS = "start_manifest.json", "start_stats.json"
"""What runs recorded before the compact file kept (read, never written)."""
HISTORY = 16
"""Live refreshes whose change lists are kept for `changed()`."""
log = logging.getLogger(__name__)


class WorkspaceWatch:
    """Scans of one workspace during a run, re-hashing only what changed since the last one.

    Per-command scans come from a `LiveTree` (inotify) when the kernel has
    room for its watches, else from a full walk each time; the gate's
    manifest is always a full walk.
    """

    def __init__(self, workspace: Path, limits: WorkspaceLimits, cache: ManifestCache | None = None) -> None:
        self.workspace, self.limits = workspace, limits
        self.cache = cache or ManifestCache()
        self.live: LiveTree | None = None
        self.use_live = True
        self.generation = 0
        self.history: dict[int, dict[str, FileState | None]] = {}
        """Live refresh number -> entries it touched and their state before."""
        self.frozen: dict[int, dict[str, FileState]] = {}
        """The manifest of the last live scan before the tree was dropped (its view went stale)."""
        self.tracker = ChangeTracker(self.changed)
        """Remembers the scan after each command, so changes no command made show up (the gate reads it too)."""

    # graphs.context.CommandWatch: the workspace around one command

    def before(self) -> Scan:
        return self.snapshot()

    def stray(self, before: Scan) -> list[str]:
        return self.tracker.stray(before)

    def after(self, before: Scan) -> tuple[list[str], str | None]:
        now = self.snapshot()
        return self.tracker.command_changes(before, now), self.over_limit(now)

    def snapshot(self) -> Scan:
        """The workspace now (manifest and size)."""
        if self.use_live and self.live is None:
            try:
                self.live = LiveTree(self.workspace, self.limits, self.cache)
            except NotifyError as e:
                log.info("per-command scans walk the whole workspace (inotify unavailable: %s)", e)
                self.use_live = False
        if self.live is not None:
            try:
                changes = self.live.refresh()
                self.generation += 1
                self.history[self.generation] = changes
                self.history.pop(self.generation - HISTORY, None)
                return replace(self.live.scan(), generation=self.generation)
            except NotifyError as e:  # overflow or no room for a watch: start over with a full walk
                log.info("rebuilding the workspace watch: %s", e)
                return self._rebuild()
        return scan(self.workspace, self.limits, self.cache, what="per-command workspace scan")

    def _rebuild(self) -> Scan:
        """A fresh live tree; its change list is the full diff against the last complete one."""
        assert self.live is not None
        old = {**self.live.states, **self.live.changes}  # undo what the failed refresh had applied
        old = {k: v for k, v in old.items() if v is not None}
        self.close()
        self.frozen = {self.generation: old}
        fresh = self.snapshot()
        if fresh.generation:
            self.history[fresh.generation] = {rel: old.get(rel) for rel in diff(old, fresh.states).changed}
        return fresh

    def close(self) -> None:
        """Drop the inotify watches."""
        live, self.live = self.live, None
        if live is not None:
            live.close()

    def changed(self, before: Scan | dict[str, FileState], after: Scan | dict[str, FileState]) -> list[str]:
        """Names that differ between two scans (or manifests), as text safe for the journal.

        A scan of the live tree holds a live view, not a copy: two such scans
        are compared through the change lists of the refreshes between them
        (`after` must be the latest); a live `before` with no refresh since is
        still exact; anything else is diffed in full.
        """
        b_gen, a_gen = getattr(before, "generation", 0), getattr(after, "generation", 0)
        b_states, a_states = getattr(before, "states", before), getattr(after, "states", after)
        gens = range(b_gen + 1, a_gen + 1)
        if b_gen and a_gen == self.generation and all(g in self.history for g in gens):
            was: dict[str, FileState | None] = {}
            for g in gens:
                for rel, old in self.history[g].items():
                    was.setdefault(rel, old)
            return sorted(shown(rel) for rel, old in was.items() if old != a_states.get(rel))
        if b_gen and b_gen != self.generation:
            if b_gen not in self.frozen:
                msg = f"scan {b_gen} of the live tree has moved on; it cannot be compared"
                raise ValueError(msg)
            b_states = self.frozen[b_gen]
        return [shown(p) for p in diff(b_states, a_states).changed]

    def over_limit(self, after: Scan) -> str | None:
        """The message the model sees when the workspace outgrew `workspace.max_*bytes`."""
        return after.over_limit(self.limits)

    def final(self) -> dict[str, FileState]:
        """The manifest the gate diffs: a full walk (it reuses hashes only by unchanged stat)."""
        return scan(self.workspace, self.limits, self.cache, what="gate's workspace manifest").states


def save_start(run_dir: Path, workspace: Path, limits: WorkspaceLimits, home: Path | None = None
               ) -> dict[str, FileState]:
    """Scan the workspace before the run and keep the manifest (and each file's stat) in the run folder.

    One compact file (runtime.workspace.manifest_file) keeps both, names as
    their exact bytes. The stats let the run's first scan reuse these
    hashes instead of reading every file again. With `home`, the scan reuses
    the hashes the last run of this workspace left there
    (runtime.workspace.hash_cache, by unchanged stat) and leaves its own: the
    same file, linked.
    """
    with gc_paused():  # 200k entries read, walked and written: no cycles among them to look for
        return _save_start(run_dir, workspace, limits, home)


def _save_start(run_dir: Path, workspace: Path, limits: WorkspaceLimits, home: Path | None) -> dict[str, FileState]:
    cache = hash_cache.load(home, workspace, limits.hash_max_bytes) if home is not None else ManifestCache()
    started = time.time_ns()
    states, live = _start_scan(workspace, limits, cache, started)
    try:
        entries = cache.entries
        data = manifest_file.encode(hash_cache.header(workspace, limits.hash_max_bytes, started), states, entries)
        write_atomic(run_dir / START_MANIFEST, data)
        if home is not None:
            hash_cache.save(home, workspace, run_dir / START_MANIFEST, data, len(states))
    except BaseException:
        if live is not None:
            live.close()
        raise
    stale: list[LiveTree] = []
    with _LOCK:  # runs of one process (an eval's cells) start in threads: a tree is closed only by its owner
        if len(_KEPT) >= KEPT_RUNS:
            _KEPT.pop(next(iter(_KEPT)))
        _KEPT[run_dir] = (_file_id(run_dir / START_MANIFEST), states, entries)
        if run_dir in _HANDED:
            stale.append(_HANDED.pop(run_dir)[1])
        while len(_HANDED) >= HANDED_RUNS:  # untaken trees only: run_watch pops a tree before using it
            stale.append(_HANDED.pop(next(iter(_HANDED)))[1])
        if live is not None:
            _HANDED[run_dir] = (workspace, live)
    for old in stale:
        old.close()
    return states


def _start_scan(workspace: Path, limits: WorkspaceLimits, cache: ManifestCache, started: int
                ) -> tuple[dict[str, FileState], LiveTree | None]:
    """The start manifest, read by a live tree the run's watch then keeps (one walk serves both), else a scan.

    `cache.entries` becomes what a scan would leave: the files changed more
    than RACY_NS before `started`, keyed by the stat they were hashed at.
    """
    try:
        live = LiveTree(workspace, limits, cache, what="start manifest", seed_before=started - RACY_NS)
    except NotifyError as e:
        log.info("start manifest by a full walk (inotify unavailable: %s)", e)
        return scan(workspace, limits, cache, what="start manifest").states, None
    cache.entries, live.seeded = live.seeded or {}, None
    return dict(live.states), live


_HANDED: dict[Path, tuple[Path, LiveTree]] = {}
"""run folder -> (work folder, the live tree its start manifest came from): `run_watch` takes it."""
HANDED_RUNS = 8
"""Live trees waiting for their run's watch (runs of one process may start at once: an eval's cells)."""
_LOCK = threading.Lock()


def run_watch(run_dir: Path, workspace: Path, limits: WorkspaceLimits, start: dict[str, FileState]
              ) -> WorkspaceWatch:
    """The run's watch; it keeps the start manifest's live tree when this process took it for this very file.

    Then the run's first scan is a refresh (the notices since the start),
    not a second walk. Otherwise (a resumed run, another process, a start
    manifest replaced since) its first scan walks, reusing the start's hashes.
    """
    with _LOCK:
        handed = _HANDED.pop(run_dir, None)
    if handed is not None:
        folder, live = handed
        if folder == workspace and _kept(run_dir) is not None and live.notify >= 0:
            watch = WorkspaceWatch(workspace, limits, live.cache)
            watch.live = live
            return watch
        live.close()
    return WorkspaceWatch(workspace, limits, start_cache(run_dir, start))


KEPT_RUNS = 2
"""Start manifests this process keeps in memory after writing them (a run reads its own back)."""
_KEPT: dict[Path, tuple[tuple[int, ...] | None, dict[str, FileState],
                        dict[str, tuple[tuple[int, ...], FileState]]]] = {}
"""run folder -> (its start manifest's file id, the manifest, its hash cache entries: stat and state)."""


def _file_id(path: Path) -> tuple[int, ...] | None:
    """Which file this is and whether it changed (write_atomic makes a new inode each time; a link to it made or
    removed, the hash cache's, moves its ctime: it is then read from disk, the same bytes)."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _kept(run_dir: Path) -> tuple[dict[str, FileState], dict[str, tuple[tuple[int, ...], FileState]]] | None:
    """What this process wrote for `run_dir`, if its start manifest is still the file written."""
    kept = _KEPT.get(run_dir)
    if kept is None or kept[0] is None or kept[0] != _file_id(run_dir / START_MANIFEST):
        return None
    return kept[1], kept[2]


def _read(run_dir: Path, *, sigs: bool) -> tuple[dict[str, FileState], dict[str, tuple[int, ...]]]:
    """The start manifest from disk (with the stats of files changed long enough before it, when `sigs`)."""
    try:
        raw = (run_dir / START_MANIFEST).read_bytes()
    except FileNotFoundError:
        if not (run_dir / OLD_START_MANIFEST).exists():
            raise
        return _read_old(run_dir, sigs=sigs)
    with gc_paused():
        head, states, found = manifest_file.decode(raw)
    if not sigs:
        return states, {}
    written = head.get("written_ns")
    if type(written) is not int:
        msg = "the start manifest has no write time"
        raise ValueError(msg)
    racy = written - RACY_NS  # what save_start kept already; checked again all the same
    return states, {k: v for k, v in found.items() if v[4] < racy and v[5] < racy}


def _read_old(run_dir: Path, *, sigs: bool) -> tuple[dict[str, FileState], dict[str, tuple[int, ...]]]:
    """A start manifest as runs recorded before the compact file kept it (two JSON files)."""
    raw = json.loads((run_dir / OLD_START_MANIFEST).read_text(encoding="ascii"))
    states = {k: FileState.model_validate(v) for k, v in raw.items()}
    if not sigs:
        return states, {}
    try:
        found = json.loads((run_dir / OLD_START_STATS).read_text(encoding="ascii"))
    except (OSError, ValueError):
        return states, {}
    if not isinstance(found, dict):
        return states, {}
    return states, {k: tuple(v) for k, v in found.items()
                    if isinstance(v, list) and len(v) == 6 and all(type(n) is int for n in v)}


def load_start(run_dir: Path) -> dict[str, FileState]:
    """The manifest `save_start` kept (from memory when this process wrote that very file)."""
    kept = _kept(run_dir)
    if kept is not None:
        return dict(kept[0])
    return _read(run_dir, sigs=False)[0]


def start_cache(run_dir: Path, states: dict[str, FileState]) -> ManifestCache:
    """The start manifest's hashes keyed by the stats they were taken at (empty when not kept)."""
    cache = ManifestCache()
    kept = _kept(run_dir)
    if kept is not None:
        cache.entries = {k: (entry[0], states[k]) for k, entry in kept[1].items() if k in states}
        return cache
    try:
        sigs = _read(run_dir, sigs=True)[1]
    except (OSError, ValueError):
        return cache
    cache.entries = {k: (sig, states[k]) for k, sig in sigs.items() if k in states}
    return cache
