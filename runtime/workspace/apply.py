"""`tether apply`: bring a shadow run's changes over from its throw-away copy into the person's folder.

Parts: `ApplyResult` and `apply_run()`.

A shadow run works on a copy; at its end its changes (base: its snapshot,
end: the copy) are recorded (runtime.workspace.changes). Applying puts each
changed path's end version into the folder where the folder still holds the
run's start; a path the person (or another run) changed since is a
conflict, shown, and nothing is done unless `force` (what it overwrites is
backed up in `<run>/backups/apply-<time>/`). The same three-way merge as
rollback (runtime.workspace.merge), the other way round.

Nothing that would run on the person's machine comes over unseen: each
such path of the plan (runtime.workspace.apply_check) is listed, and so is
a run that did not end `success`; either refuses the apply unless the
person confirms (`yes`).
"""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel, Field

from tether.common.errors import ConfigError
from tether.common.liveness import pinned
from tether.common.snapshot import SHADOW_DIR, SNAPSHOT_DIR, load_manifest, to_text
from tether.common.walk import Deadline, shown
from tether.runtime.config import TetherConfig
from tether.runtime.run_ids import run_dir
from tether.runtime.workspace.apply_check import host_code, run_status
from tether.runtime.workspace.changes import load_changes, record_changes
from tether.runtime.workspace.history import APPLIED, Mark, Marks, apply_items
from tether.runtime.workspace.lock import WorkspaceLock
from tether.runtime.workspace.merge import Conflict, Plan, plan
from tether.runtime.workspace.writer import carry_out


class NotShadowError(ConfigError):
    """`tether apply` was given a run that was not a shadow run, or one that has not finished."""


class ApplyResult(BaseModel):
    """What applying a shadow run did (or, with --dry-run, would do)."""

    run_id: str
    workspace: Path
    dry_run: bool = False
    done: bool = False
    refused: str = ""
    """Why nothing was applied though the copy holds changes (conflicts)."""
    nothing: str = ""
    """Why there is nothing to apply (applied already, the copy pruned)."""
    added: list[str] = Field(default_factory=list)
    modified: list[str] = Field(default_factory=list)
    deleted: list[str] = Field(default_factory=list)
    already: list[str] = Field(default_factory=list)
    conflicts: list[Conflict] = Field(default_factory=list)
    kept: list[Conflict] = Field(default_factory=list)
    backup: Path | None = None
    status: str = ""
    """How the shadow run ended (run.json; `unknown` when that cannot be read)."""
    host_code: list[str] = Field(default_factory=list)
    """What the apply would put in the folder that runs on the person's machine, one line each."""
    confirm: list[str] = Field(default_factory=list)
    """Why the apply needs `--yes` (host code, a run that did not end `success`); empty when it does not."""


def _fill(result: ApplyResult, p: Plan) -> ApplyResult:
    for step in p.steps:
        target, now = step.item.target.version, step.now
        label = shown(step.item.rel) + ("/" if any(v is not None and v.type == "dir" for v in (now, target)) else "")
        (result.deleted if target is None else result.added if now is None else result.modified).append(label)
    result.already, result.conflicts, result.kept = p.already, p.conflicts, p.kept
    return result


def _confirm(result: ApplyResult, status_why: str) -> list[str]:
    why = []
    if result.host_code:
        why.append(f"it would bring over {len(result.host_code)} change(s) that run code on your machine")
    if result.status != "success":
        why.append(f"run {result.run_id} did not end `success` (its status: {result.status}"
                   + (f"; {status_why}" if status_why else "") + ")")
    return why


def apply_run(config: TetherConfig, run_id: str, *, dry_run: bool = False, force: bool = False,
              yes: bool = False) -> ApplyResult:
    """Bring the shadow run's changes into its workspace where the workspace still holds the run's start.

    Raises:
        NotShadowError: not a shadow run.
        NoSnapshotError: its snapshot (and copy) were pruned.
        WorkspaceBusyError: a run is live on the workspace.
    """
    folder = run_dir(config.runs_dir, run_id)
    workspace = load_manifest(folder).workspace
    copy = folder / SHADOW_DIR
    changes = load_changes(folder)
    if changes is None:
        if not copy.is_dir():
            msg = f"run {run_id} was not a shadow run (it changed {workspace} itself); nothing to apply"
            raise NotShadowError(msg)
    elif not changes.shadow:
        msg = f"run {run_id} was not a shadow run: its changes are in {workspace} already; nothing to apply"
        raise NotShadowError(msg)
    if pinned(folder):
        msg = (f"shadow run {run_id} is still live or waiting for an answer; let it finish (`tether resume`, "
               f"`tether approve|deny {run_id}`) before applying it")
        raise NotShadowError(msg)
    result = ApplyResult(run_id=run_id, workspace=workspace, dry_run=dry_run)
    mark = Marks(folder).applied
    if mark is not None:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(mark.at))
        result.nothing = f"run {run_id} was applied already ({when})"
        return result
    if not copy.is_dir():
        result.nothing = f"the copy of shadow run {run_id} was pruned (workspace.snapshot_keep)"
        return result
    lock = None if dry_run else WorkspaceLock(config.home, workspace, f"apply:{run_id}").acquire()
    try:
        if changes is None:  # killed before its end was recorded: the copy is still there, read it now
            changes = record_changes(folder, copy, config.workspace, run_id=run_id, workspace=workspace, shadow=True)
        cap = config.workspace.hash_max_bytes
        p = plan(workspace, apply_items(folder, changes), cap, force=force,
                 deadline=Deadline(config.workspace.host_pass_seconds, "planning the apply"))
        _fill(result, p)
        result.status, status_why = run_status(config.runs_dir, run_id)
        result.host_code = host_code(p, folder, copy, folder / SNAPSHOT_DIR / "files",
                                     mount=config.sandbox.workspace_mount)
        result.confirm = _confirm(result, status_why) if p.steps or p.conflicts else []
        refused = []
        if p.blocked:
            names = ", ".join(c.path for c in p.conflicts[:3]) + (", ..." if len(p.conflicts) > 3 else "")
            refused.append(f"{len(p.conflicts)} path(s) ({names}) changed in {workspace} since run {run_id} "
                           "started; pass --force to apply anyway (what it overwrites is backed up)")
        if result.confirm and not yes:
            refused.append("; ".join(result.confirm) + "; look at it (`tether show " + run_id + " --diff`), "
                           "then pass --yes to apply anyway")
        if refused:
            result.refused = "nothing was applied: " + "; and ".join(refused)
            return result
        if dry_run or not p.steps:
            return result
        done = carry_out(p, folder / "backups" / f"apply-{time.strftime('%Y%m%d-%H%M%S')}")
        result.done, result.backup = True, done.backup
        Marks(folder).put(APPLIED, Mark(paths=[to_text(s.item.rel) for s in p.steps],
                                        forced=[to_text(s.item.rel) for s in p.steps if s.forced], backup=done.backup))
        return result
    finally:
        if lock is not None:
            lock.release()
