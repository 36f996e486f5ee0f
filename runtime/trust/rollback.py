"""`tether rollback`: undo what a run changed, and only that, then demote what the run was trusted with.

Parts: `approved_kinds` (what a run approved), `RunUndo` and
`RollbackResult` (per run, and in all), and `rollback_run`.

A rollback restores, from the run's snapshot, only the paths the run
changed (runtime.workspace.changes), and only where the folder still holds
what the run left; a path changed since (by the person or another run) is a
conflict, shown, and nothing is done (`force` overrides, backing up what it
overwrites). Files the run never touched are never touched. Everything
removed or overwritten is first copied to `<run>/backups/rollback-<time>/`.
When newer runs changed the same paths, the rollback names them and refuses,
or (`with_newer`) undoes them first, newest first, after checking the whole
chain on paper. A run's trusted kinds are demoted once it is rolled back.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from tether.common.manifest import WorkspaceDiff
from tether.common.snapshot import JOURNAL_FILE, RestoreResult, from_text, load_manifest, to_text
from tether.common.walk import Deadline, shown
from tether.runtime.config import TetherConfig
from tether.runtime.run_ids import run_dir
from tether.runtime.trust.ledger import APPROVALS_FILE, LedgerCorruptError, TrustLedger
from tether.runtime.workspace.changes import RunChanges, load_changes
from tether.runtime.workspace.history import (
    ROLLED_BACK,
    Mark,
    Marks,
    later_runs,
    touched,
    undo_items,
    unrecorded_items,
)
from tether.runtime.workspace.lock import WorkspaceLock
from tether.runtime.workspace.merge import Conflict, Item, Plan, plan
from tether.runtime.workspace.units import used_since
from tether.runtime.workspace.versions import Located, Version
from tether.runtime.workspace.writer import carry_out


def _json_lines(file: Path) -> list[dict]:
    """JSON objects of a log, skipping lines that are not (a crash may cut the last one)."""
    rows = []
    lines = file.read_text(encoding="utf-8", errors="replace").splitlines() if file.is_file() else []
    for line in lines:
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def approved_kinds(path: Path) -> list[str]:
    """Kinds approved (by a person or automatically) in the run at `path`.

    Sources, all optional: `approvals.jsonl` rows `{"kind": K, "approved": true}`
    (written by `TrustLedger.record`); in `journal.jsonl`, events
    `{"type": "approval", "kinds": [...], "approved": true}`, events
    `{"kind": "approval", "cmd_id": C, "approved": true}` joined with the
    `{"kind": "verdict", "cmd_id": C, "kinds": [...]}` of the same command, and
    verdict events the trust ledger turned from ask into allow (`enforced`;
    not in shadow runs, which enforce nothing).
    """
    kinds = {r["kind"] for r in _json_lines(path / APPROVALS_FILE)
             if r.get("approved") is True and isinstance(r.get("kind"), str)}
    events = _json_lines(path / JOURNAL_FILE)
    verdicts = {e.get("cmd_id"): e.get("kinds") for e in events if e.get("kind") == "verdict"}
    shadow = any(e.get("kind") == "run_start" and e.get("shadow") is True for e in events)
    for e in events:
        found: object = None
        if e.get("type") == "approval" and e.get("approved") is True:
            found = e.get("kinds")
        elif e.get("kind") == "approval" and e.get("approved") is True:
            found = verdicts.get(e.get("cmd_id"))
        elif (not shadow and e.get("kind") == "verdict" and e.get("decision") == "ask"
              and e.get("enforced") == "allow"):
            found = e.get("kinds")
        if isinstance(found, list):
            kinds.update(k for k in found if isinstance(k, str))
    return sorted(kinds)


class RunUndo(BaseModel):
    """One run's part of a rollback (planned, or done)."""

    run_id: str
    reverted: list[str] = Field(default_factory=list)
    """Put back to their start (changed by the run)."""
    removed: list[str] = Field(default_factory=list)
    """Made by the run, removed."""
    recreated: list[str] = Field(default_factory=list)
    """Removed by the run, put back."""
    already: list[str] = Field(default_factory=list)
    """Already as they were before the run."""
    conflicts: list[Conflict] = Field(default_factory=list)
    kept: list[Conflict] = Field(default_factory=list)
    """With --force, still left alone (a folder holding your files, or a folder that is gone)."""
    backup: Path | None = None
    demoted: list[str] = Field(default_factory=list)


class RollbackResult(BaseModel):
    """A rollback of one run (and the newer runs it had to undo first)."""

    run_id: str
    workspace: Path
    dry_run: bool = False
    forced: bool = False
    done: bool = False
    """Whether the folder was changed."""
    refused: str = ""
    """Why nothing was done though there is something to undo (conflicts, newer runs)."""
    nothing: str = ""
    """Why there is nothing to undo (rolled back already, a shadow run never applied)."""
    newer: list[str] = Field(default_factory=list)
    """Newer runs that changed the same paths (undone first with --with-newer), newest first."""
    runs: list[RunUndo] = Field(default_factory=list)
    """Each run undone or to undo, in order (newest first; the asked run last)."""
    restore: RestoreResult | None = None
    """All of it as one diff, seen from the runs: `added` were removed, `modified` put back, `deleted` recreated."""
    demoted: list[str] = Field(default_factory=list)
    ledger_error: str | None = None
    """Set when the ledger is corrupt: the workspace is restored but nothing was demoted."""

    @property
    def conflicts(self) -> list[Conflict]:
        return [c for r in self.runs for c in r.conflicts]


def _is_shadow(path: Path) -> bool:
    return any(e.get("kind") == "run_start" and e.get("shadow") is True for e in _json_lines(path / JOURNAL_FILE))


def _items(folder: Path, run_id: str, changes: RunChanges | None, workspace: Path, config: TetherConfig
           ) -> tuple[list[Item], str]:
    """The run's paths as merge items, or why there is nothing to undo."""
    if changes is None:
        if _is_shadow(folder):
            return [], (f"run {run_id} was a shadow run that never recorded its end; it worked on a copy, so your "
                        "folder was never changed by it")
        return unrecorded_items(folder, workspace, config.workspace, run_id), ""
    if changes.shadow:
        mark = Marks(folder).applied
        if mark is None:
            return [], (f"run {run_id} was a shadow run and was never applied: it worked on a copy and never changed "
                        f"your folder (bring its changes over with `tether apply {run_id}`)")
        paths = {from_text(p) for p in mark.paths}
        return undo_items(folder, changes, only=paths, unsure={from_text(p) for p in mark.forced}), ""
    return undo_items(folder, changes), ""


def _summary(name: str, p: Plan) -> RunUndo:
    undo = RunUndo(run_id=name, already=p.already, conflicts=p.conflicts, kept=p.kept)
    for step in p.steps:
        label = _label(step.item.rel, step.now, step.item.target.version)
        if step.item.target.version is None:
            undo.removed.append(label)
        elif step.now is None:
            undo.recreated.append(label)
        else:
            undo.reverted.append(label)
    return undo


def _label(rel: str, now: Version | None, target: Version | None) -> str:
    folder = any(v is not None and v.type == "dir" for v in (now, target))
    return shown(rel) + ("/" if folder else "")


def rollback_run(config: TetherConfig, run_id: str, *, dry_run: bool = False, force: bool = False,
                 with_newer: bool = False) -> RollbackResult:
    """Undo the run's changes where the folder still holds them; refuse, naming why, where it does not.

    Raises:
        NoSnapshotError: the run has no snapshot (never taken, or pruned).
        StateFileError: its change record is unreadable.
    """
    folder = run_dir(config.runs_dir, run_id)
    workspace = load_manifest(folder).workspace
    changes = load_changes(folder)
    result = RollbackResult(run_id=run_id, workspace=workspace, dry_run=dry_run, forced=force)
    if Marks(folder).rolled_back is not None:
        result.nothing = f"run {run_id} was rolled back already"
        return result
    items, why = _items(folder, run_id, changes, workspace, config)
    if why:
        result.nothing = why
        return result
    chain: list[Undo] = []
    if changes is not None:
        for name, theirs in later_runs(config.runs_dir, run_id, changes, {i.rel for i in items}):
            other = run_dir(config.runs_dir, name)
            only = touched(other, theirs)
            unsure = {from_text(p) for p in (Marks(other).applied or Mark()).forced} if theirs.shadow else set()
            chain.append(Undo(name, other, undo_items(other, theirs, only=only, unsure=unsure), theirs))
    result.newer = [u.run_id for u in chain]
    if chain and not with_newer:
        result.refused = (f"newer run(s) {', '.join(result.newer)} changed the same paths; roll them back first, or "
                          f"pass --with-newer to undo them, newest first, then {run_id}")
        return result
    chain.append(Undo(run_id, folder, items, changes))
    lock = None if dry_run else WorkspaceLock(config.home, workspace, f"rollback:{run_id}").acquire()
    try:
        return _run_chain(config, result, chain, force, dry_run)
    finally:
        if lock is not None:
            lock.release()


@dataclass
class Undo:
    """One run to undo: its folder, its paths as merge items, and its recorded changes (None: never recorded)."""

    run_id: str
    folder: Path
    items: list[Item]
    changes: RunChanges | None


def _repository_conflict(config: TetherConfig, undo: Undo, newer: set[str], ws: Path) -> Conflict | None:
    """A conflict for `.git` when the run changed the repository and it was used since (runtime.workspace.units)."""
    if undo.changes is None:
        return None
    used = used_since(undo.folder, undo.changes, ws, config.workspace, newer)
    if not used:
        return None
    return Conflict(path=".git", why=(f"the repository was used since the run ({', '.join(used)} changed): undoing "
                                      "the run's commits and objects could break your later ones"),
                    now="changed", expected="as the run left it", target="as before the run")


def _run_chain(config: TetherConfig, result: RollbackResult, chain: list[Undo],
               force: bool, dry_run: bool) -> RollbackResult:
    cap, ws = config.workspace.hash_max_bytes, result.workspace
    deadline = Deadline(config.workspace.host_pass_seconds, "planning the rollback")
    overlay: dict[str, Located] = {}
    newer: set[str] = set()
    for undo in chain:  # on paper first: the whole chain must go through
        p = plan(ws, undo.items, cap, force=force, overlay=overlay, deadline=deadline)
        repo = None if force else _repository_conflict(config, undo, newer, ws)
        if repo is not None:
            p.conflicts.append(repo)
        result.runs.append(_summary(undo.run_id, p))
        overlay.update({s.item.rel: s.item.target for s in p.steps})
        newer |= {i.rel for i in undo.items}
    if any(r.conflicts for r in result.runs):
        bad = [r.run_id for r in result.runs if r.conflicts]
        result.refused = (f"{_paths(result.conflicts)} changed since run {bad[0]}; nothing was changed; keep your "
                          "changes, or pass --force to restore anyway (what it overwrites is backed up)")
        return result
    if dry_run:
        return result
    result.runs = []
    for undo in chain:
        name, folder = undo.run_id, undo.folder
        p = plan(ws, undo.items, cap, force=force, deadline=Deadline(config.workspace.host_pass_seconds, "rollback"))
        if p.blocked:
            result.refused = f"run {name}: {len(p.conflicts)} path(s) changed while the rollback ran; run it again"
            result.runs.append(_summary(name, p))
            return result
        stamp = time.strftime("%Y%m%d-%H%M%S")
        done = carry_out(p, folder / "backups" / f"rollback-{stamp}", Deadline(None, "rollback"))
        undo = _summary(name, p).model_copy(update={"backup": done.backup})
        result.runs.append(undo)
        result.done = result.done or bool(p.steps)
        if not p.kept:  # whole: the run counts as rolled back (a partial one can be tried again)
            Marks(folder).put(ROLLED_BACK, Mark(paths=[to_text(s.item.rel) for s in p.steps],
                                                forced=[to_text(s.item.rel) for s in p.steps if s.forced],
                                                backup=done.backup))
        _demote(config, name, folder, undo, result)
    result.restore = RestoreResult(workspace=ws, diff=WorkspaceDiff(
        added=sorted(p for r in result.runs for p in r.removed),
        modified=sorted(p for r in result.runs for p in r.reverted),
        deleted=sorted(p for r in result.runs for p in r.recreated)))
    return result


def _paths(conflicts: list[Conflict]) -> str:
    """`2 paths (a.txt, b/c)`: the count and the first few, for a one-line refusal."""
    names = ", ".join(c.path for c in conflicts[:3]) + (", ..." if len(conflicts) > 3 else "")
    return f"{len(conflicts)} path{'' if len(conflicts) == 1 else 's'} ({names})"


def _demote(config: TetherConfig, name: str, folder: Path, undo: RunUndo, result: RollbackResult) -> None:
    kinds = approved_kinds(folder)
    try:
        ledger = TrustLedger.load(config.ledger_path, config.trust, runs_dir=config.runs_dir)
        for kind in kinds:
            ledger.demote(kind, f"run {name} rolled back", run_id=name)
    except LedgerCorruptError as e:
        result.ledger_error = str(e)
        return
    undo.demoted = kinds
    result.demoted = sorted({*result.demoted, *kinds})
