"""A home that lasts: what finished runs no longer need is pruned.

Parts: `prune_run` (at a run's end, `run.keep_checkpoints`), `GcReport`
and `gc_home` (`tether gc`: every finished run's checkpoints, then old
snapshots per `workspace.snapshot_keep`, then the database compacted, then
near-equal live lessons merged as a revision would merge them, memory.merge).

A run is finished when run.json has a final status (not `running` or
`interrupted`), it waits for no answer, no live process holds it (its live
marker, common.liveness) and its last checkpoint says its graph ended. Any
other run is never touched. See runtime.run.checkpoints for what a finished
run keeps.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from pydantic import BaseModel, Field

from tether.common.errors import TetherError
from tether.common.liveness import pinned
from tether.common.snapshot import gc_snapshots
from tether.runtime.config import TetherConfig
from tether.runtime.run.checkpoints import compact, connect, prunable, prune_finished
from tether.runtime.run.files import load_meta

log = logging.getLogger(__name__)
FINAL = frozenset({"success", "needs-review", "failed", "blocked"})


def _file_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def prune_run(config: TetherConfig, run_id: str) -> int:
    """Prune the checkpoints of a run that just finished (`run.keep_checkpoints = "last"`); bytes freed.

    Never fails the run: a database that cannot be pruned now is logged and left for `tether gc`.
    """
    if config.run.keep_checkpoints == "all" or not config.checkpoint_db.exists():
        return 0
    try:
        conn = connect(config.checkpoint_db)
    except TetherError as e:
        log.warning("checkpoints of run %s not pruned: %s", run_id, e)
        return 0
    try:
        freed = prune_finished(conn, run_id)
        if freed:
            compact(conn)
        return freed
    except sqlite3.Error as e:
        log.warning("checkpoints of run %s not pruned (%s); `tether gc` prunes them later", run_id, e)
        return 0
    finally:
        conn.close()


class GcReport(BaseModel):
    """What `tether gc` freed (or would free, with `dry_run`)."""

    dry_run: bool
    runs_pruned: list[str] = Field(default_factory=list)
    """Finished runs whose checkpoints were cut to the last one."""
    checkpoint_bytes: int = 0
    """Checkpoint data freed (or that would be)."""
    skipped: dict[str, str] = Field(default_factory=dict)
    """Runs left alone, with why (live, paused, not finished)."""
    snapshots_pruned: list[str] = Field(default_factory=list)
    lessons_merged: dict[str, str] = Field(default_factory=dict)
    """Live lessons that said what an older one says: retired into it (id -> the id kept), histories kept."""
    lessons_left: list[list[str]] = Field(default_factory=list)
    """Groups of near-equal lessons left alone because a person's (pinned) lesson is among them."""
    db_before: int = 0
    db_after: int = 0
    """Size of the database file (with its WAL) before and after."""


def _why_kept(config: TetherConfig, run_id: str) -> str:
    """Why a run's checkpoints must stay ("" when the run is finished)."""
    folder = config.runs_dir / run_id
    if pinned(folder):
        return "live or paused"
    try:
        meta = load_meta(config.runs_dir, run_id)
    except TetherError:
        return "run.json unreadable"
    if meta.get("awaiting"):
        return "waiting for an answer"
    if meta["status"] not in FINAL:
        return f"status {meta['status']}"
    return ""


def gc_home(config: TetherConfig, *, dry_run: bool = False) -> GcReport:
    """Prune every finished run's checkpoints and old snapshots, then compact the database."""
    report = GcReport(dry_run=dry_run, db_before=_file_bytes(config.checkpoint_db))
    if config.checkpoint_db.exists():
        conn = connect(config.checkpoint_db)
        try:
            threads = [r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")]
            for run_id in sorted(threads):
                why = _why_kept(config, run_id) if (config.runs_dir / run_id).is_dir() else ""
                if why:
                    report.skipped[run_id] = why
                    continue
                freed = prunable(conn, run_id) if dry_run else prune_finished(conn, run_id)
                if freed:
                    report.runs_pruned.append(run_id)
                    report.checkpoint_bytes += freed
            if not dry_run:
                compact(conn, full=True)
        finally:
            conn.close()
    keep = config.workspace.snapshot_keep
    if not dry_run and keep:
        report.snapshots_pruned = gc_snapshots(config.runs_dir, keep)
    report.db_after = _file_bytes(config.checkpoint_db)
    if config.memory_dir.is_dir():
        report.lessons_merged, report.lessons_left = _merge_lessons(config, dry_run)
    return report


def _merge_lessons(config: TetherConfig, dry_run: bool) -> tuple[dict[str, str], list[list[str]]]:
    """Near-equal live lessons merged by memory.merge's rule (a home from before revisions merged them)."""
    from datetime import UTC, datetime

    from tether.memory.merge import merge_all
    from tether.memory.store import MemoryStore

    store = MemoryStore(config.memory_dir, config.memory)
    try:
        return merge_all(store, datetime.now(UTC), dry_run=dry_run)
    finally:
        store.close()
