"""Which runs changed a workspace, in what order, and what rollback or apply did to them.

Parts: `Marks` (a run folder's `applied.json` and `rolled_back.json`),
`undo_items()` and `apply_items()` (a run's changes as merge items: rollback
expects the run's end and puts back its start; apply the reverse),
`unrecorded_items()` (a killed run's differences, each one a conflict), and
`later_runs()` (the newer runs whose changes touch the same paths, which a
rollback of an older run would also undo).
"""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from tether.common.atomic import write_atomic
from tether.common.errors import StateFileError
from tether.common.limits import WorkspaceLimits
from tether.common.snapshot import SHADOW_DIR, SNAPSHOT_DIR, from_text
from tether.runtime.workspace.changes import CHANGES_FILE, RunChanges, load_changes
from tether.runtime.workspace.merge import Item
from tether.runtime.workspace.versions import Located

APPLIED = "applied.json"
ROLLED_BACK = "rolled_back.json"


class Mark(BaseModel):
    """What `tether apply` or `tether rollback` did to a run's paths."""

    model_config = ConfigDict(extra="forbid")

    at: float = Field(default_factory=time.time)
    paths: list[str] = Field(default_factory=list)
    """Paths changed in the folder (common.snapshot.to_text)."""
    forced: list[str] = Field(default_factory=list)
    """Of those, the ones that overwrote a change of someone else's (--force)."""
    backup: Path | None = None


class Marks:
    """A run folder's marks: applied (a shadow run brought over) and rolled back."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir

    def get(self, name: str) -> Mark | None:
        """The mark, None when it was never put; StateFileError when it is there but damaged."""
        path = self.run_dir / name
        try:
            return Mark.model_validate_json(path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:
            what = "applied" if name == APPLIED else "rolled back"
            msg = (f"{path} is unreadable ({(str(e).splitlines() or [type(e).__name__])[0]}): Tether cannot tell "
                   f"whether run {self.run_dir.name} was {what} already, so nothing was changed; restore that file "
                   f"from a backup, or remove it if the run was never {what}")
            raise StateFileError(msg) from e

    def put(self, name: str, mark: Mark) -> None:
        write_atomic(self.run_dir / name, mark.model_dump_json(indent=1))

    @property
    def applied(self) -> Mark | None:
        return self.get(APPLIED)

    @property
    def rolled_back(self) -> Mark | None:
        return self.get(ROLLED_BACK)


def _copy_root(run_dir: Path, changes: RunChanges) -> Path | None:
    """Where the run's end bytes are: a shadow run's copy while it exists; a plain run keeps only hashes."""
    copy = run_dir / SHADOW_DIR
    return copy if changes.shadow and copy.is_dir() else None


def undo_items(run_dir: Path, changes: RunChanges, only: set[str] | None = None,
               unsure: frozenset[str] | set[str] = frozenset()) -> list[Item]:
    """Rollback: where the folder still holds the run's end, put back its start (`only`: these paths)."""
    base, end = run_dir / SNAPSHOT_DIR / "files", _copy_root(run_dir, changes)
    return [Item(rel, Located(c.after, end, rel), Located(c.before, base, rel), unknown_expected=rel in unsure)
            for rel, c in changes.rels().items() if only is None or rel in only]


def apply_items(run_dir: Path, changes: RunChanges) -> list[Item]:
    """Apply: where the folder still holds the run's start, put the shadow copy's end."""
    base, end = run_dir / SNAPSHOT_DIR / "files", _copy_root(run_dir, changes)
    return [Item(rel, Located(c.before, base, rel), Located(c.after, end, rel)) for rel, c in changes.rels().items()]


def unrecorded_items(run_dir: Path, workspace: Path, limits: WorkspaceLimits, run_id: str) -> list[Item]:
    """A run killed before its end was recorded: every difference from the snapshot, each one a conflict."""
    from tether.runtime.workspace.changes import record_changes

    seen = record_changes(run_dir, workspace, limits, run_id=run_id, workspace=workspace, save=False)
    return undo_items(run_dir, seen, unsure=set(seen.rels()))


def touched(run_dir: Path, changes: RunChanges) -> set[str] | None:
    """The paths a run changed in the person's folder (None: it never did: a shadow run not applied)."""
    if changes.shadow:
        mark = Marks(run_dir).applied
        return None if mark is None else {from_text(p) for p in mark.paths}
    return set(changes.rels())


def _overlap(a: set[str], b: set[str]) -> bool:
    """Same path, or one inside a folder the other changed."""
    if a & b:
        return True
    folders_a = {p + "/" for p in a}
    return any(q.startswith(f) for q in b for f in folders_a) or any(p.startswith(q + "/") for p in a for q in b)


def later_runs(runs_dir: Path, run_id: str, changes: RunChanges, paths: set[str]) -> list[tuple[str, RunChanges]]:
    """Newer runs on the same workspace, not rolled back, overlapping these paths or a picked run's; newest first."""
    found: list[tuple[float, str, RunChanges, set[str]]] = []
    for path in runs_dir.glob(f"*/{CHANGES_FILE}"):
        other = path.parent.name
        if other == run_id or Marks(path.parent).rolled_back is not None:
            continue
        try:
            theirs = load_changes(path.parent)
        except OSError:
            continue
        if theirs is None or theirs.workspace != changes.workspace or theirs.started_at <= changes.started_at:
            continue
        mine = touched(path.parent, theirs)
        if mine:
            found.append((theirs.started_at, other, theirs, mine))
    found.sort(key=lambda f: f[0])
    picked: list[tuple[float, str, RunChanges, set[str]]] = []
    reach = set(paths)
    for entry in found:  # oldest first, so a run touching a later pick's paths is found through it
        if _overlap(reach, entry[3]):
            picked.append(entry)
            reach |= entry[3]
    return [(name, theirs) for _, name, theirs, _ in sorted(picked, key=lambda f: f[0], reverse=True)]
