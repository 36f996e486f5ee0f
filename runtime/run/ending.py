"""What a run leaves for after it: the record of its changes, and what the person must be told.

Parts: `record_end()` (once the sandbox is gone and the workspace handed
back: record the run's changes, base to end, for `tether rollback` and
`tether apply`, and put the notices in the run's record) and
`changes_summary()` (the recorded changes as shown names, for the result).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from tether.common.errors import TetherError
from tether.common.snapshot import MANIFEST, SNAPSHOT_DIR
from tether.common.walk import shown
from tether.runtime.config import TetherConfig
from tether.runtime.hooks.base import RunRecord
from tether.runtime.run.files import work_folder
from tether.runtime.workspace.changes import RunChanges, load_changes, record_changes

log = logging.getLogger(__name__)
SHOWN_MAX = 200
"""Names listed per kind of change in a run's result (the count is always whole)."""


def summary_of(changes: RunChanges) -> dict[str, Any]:
    """`added`, `modified`, `deleted` (shown names, folders ending in `/`, at most SHOWN_MAX each) and `counts`."""
    names: dict[str, list[str]] = {"added": [], "modified": [], "deleted": []}
    for rel, c in changes.rels().items():
        folder = any(v is not None and v.type == "dir" for v in (c.before, c.after))
        kind = "added" if c.before is None else "deleted" if c.after is None else "modified"
        names[kind].append(shown(rel) + ("/" if folder else ""))
    return {**{k: v[:SHOWN_MAX] for k, v in names.items()}, "counts": {k: len(v) for k, v in names.items()}}


def changes_summary(run_dir: Path) -> dict[str, Any] | None:
    """The run's recorded changes for its result, or None when none were recorded."""
    try:
        changes = load_changes(run_dir)
    except OSError:
        return None
    return None if changes is None else summary_of(changes)


def record_end(config: TetherConfig, meta: dict[str, Any], record: RunRecord, notices: list[str]) -> RunRecord:
    """Record the run's changes (after the hand-back) and add what the person must be told to its record."""
    run_dir, run_id = record.run_dir, record.run_id
    shadow = bool(meta.get("shadow"))
    notes = list(notices)
    summary: dict[str, Any] | None = None
    if (run_dir / SNAPSHOT_DIR / MANIFEST).is_file():
        try:
            changes = record_changes(run_dir, work_folder(meta), config.workspace, run_id=run_id,
                                     workspace=Path(meta["workspace"]), shadow=shadow)
            summary = summary_of(changes)
        except (OSError, TetherError) as e:
            log.warning("could not record the changes of run %s: %s", run_id, e)
            notes.append(f"could not record what the run changed ({e}); `tether rollback {run_id}` will treat every "
                         "difference from its snapshot as a conflict (--force restores them)")
    elif not shadow:
        notes.append(f"no snapshot of the workspace was taken before the run, so `tether rollback {run_id}` "
                     "cannot undo it")
    if shadow and summary is not None:
        count = sum(summary["counts"].values())
        notes.append(f"shadow run: your folder {meta['workspace']} was not changed; the copy holds {count} change(s); "
                     f"see them with `tether apply {run_id} --dry-run`, bring them over with `tether apply {run_id}`"
                     if count else f"shadow run: your folder {meta['workspace']} was not changed, and the copy holds "
                     "no change")
    return record.model_copy(update={"notices": [*record.notices, *notes], "changes": summary})
