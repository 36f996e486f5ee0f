"""Gathering the gate's evidence from the journal, the state and the workspace.

Parts: `list_processes()` (what runs in the sandbox: its process table, told
apart by pid and start time, never by name; see sandbox/processes.py),
`commands_from_journal()`,
and `build_evidence()`. The model's own words enter only as claims to check.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tether.common.events import (
    ApprovalRecorded,
    CommandProposed,
    Event,
    ExecFinished,
    LessonsUsed,
    VerdictRecorded,
)
from tether.common.manifest import FileState, diff, manifest
from tether.common.walk import read_rel, shown
from tether.gate.evidence import (
    Budgets,
    Claim,
    CommandEvidence,
    Evidence,
    PlanStepEvidence,
    StepEvidence,
    goal_flags,
    real_changes,
)
from tether.runtime.config import RunConfig
from tether.sandbox.base import Sandbox
from tether.sandbox.processes import Proc, left_running

TEXT_CAP = 65_536


def list_processes(sandbox: Sandbox, baseline: list[Proc] | None = None, settle_s: float = 1.2) -> list[Proc] | None:
    """The sandbox's processes (but Tether's probe); None when they cannot be listed.

    With a `baseline`, a listing that shows anything beyond it is taken again
    after `settle_s`: a process counts as left running only if it is still
    there then (the tail of the last command exiting, busybox `timeout`'s
    watchdog, which polls each second, are gone by then). Whatever the second
    listing shows counts, new pids included (a leftover that keeps
    re-spawning under new pids is still a leftover).
    """
    lister = getattr(sandbox, "processes", None)
    if lister is None:
        return None  # a sandbox that cannot list its processes: R15 fails closed
    try:
        now = lister()
        if baseline is not None and left_running(now, baseline):
            time.sleep(settle_s)
            now = lister()
    except Exception:  # a dead sandbox cannot list anything: the gate treats None as a fail
        return None
    return now


def commands_from_journal(events: Sequence[Event]) -> list[CommandEvidence]:
    """One record per proposed command, joined with its verdict, approval and result."""
    cmds: dict[str, dict[str, Any]] = {}
    for e in events:
        if isinstance(e, CommandProposed):
            cmds[e.cmd_id] = {"id": e.cmd_id, "step": e.step, "tool": e.tool, "command": e.command, "cwd": e.cwd}
        elif isinstance(e, VerdictRecorded) and e.cmd_id in cmds:
            cmds[e.cmd_id].update(decision=e.decision, enforced=e.enforced, rules=e.rules, categories=e.categories)
        elif isinstance(e, ApprovalRecorded) and e.cmd_id in cmds:
            cmds[e.cmd_id]["approval"] = "approved" if e.approved else "refused"
        elif isinstance(e, ExecFinished) and e.cmd_id in cmds:
            cmds[e.cmd_id].update(executed=True, exit_code=e.exit_code, output=e.output, changed=e.changed, secrets=e.secrets)
    return [CommandEvidence.model_validate(c) for c in cmds.values()]


def _texts(root: Path, paths: list[str]) -> dict[str, str]:
    """Leading text of each regular file, read by descriptor (no symlink followed, no FIFO opened)."""
    out: dict[str, str] = {}
    for rel in paths:
        data = read_rel(root, rel, TEXT_CAP)
        if data is not None:
            out[shown(rel)] = data.decode("utf-8", errors="replace")
    return out


def build_evidence(
    state: dict[str, Any],
    events: Sequence[Event],
    *,
    workspace: Path,
    start_manifest: dict[str, FileState],
    end_manifest: dict[str, FileState] | None = None,
    processes: list[Proc] | None,
    baseline: list[Proc] | None,
    limits: RunConfig,
    lessons_used: list[str],
    mount: str,
) -> Evidence:
    """The run's evidence, from what happened rather than what was said."""
    goal = state.get("goal", "")
    wants_change, artifacts = goal_flags(goal)
    end = manifest(workspace) if end_manifest is None else end_manifest
    raw = diff(start_manifest, end)
    delta = raw.shown()
    steps = state.get("steps", {})
    summary = state.get("summary") or {}
    commands = commands_from_journal(events)
    left = None
    if processes is not None and baseline is not None:
        left = [p.describe() for p in left_running(processes, baseline)]
    recorded = sorted({i for e in events if isinstance(e, LessonsUsed) for i in e.ids})
    return Evidence(
        goal=goal,
        wants_change=wants_change,
        artifacts=artifacts,
        plan=[PlanStepEvidence.model_validate(p) for p in state.get("plan", [])],
        plan_valid=bool(state.get("plan_valid")),
        steps=[StepEvidence(id=sid, status=s["status"], reason=s.get("reason", ""), commands=s.get("commands", [])) for sid, s in steps.items()],
        commands=commands,
        claimed_reads=sorted({f for s in steps.values() for f in s.get("files_read", [])}),
        claimed_changes=sorted({f for s in steps.values() for f in s.get("files_changed", [])}),
        diff_added=delta.added,
        diff_modified=delta.modified,
        diff_deleted=delta.deleted,
        changed_texts=_texts(workspace, real_changes([*raw.added, *raw.modified])),
        stray_changes=sorted({p for e in events if isinstance(e, ExecFinished) for p in e.stray}),
        workspace_files=sorted(shown(p) for p in end),
        workspace_mount=mount,
        summary=summary.get("text") or None,
        summary_files=summary.get("files", []),
        summary_commands=summary.get("commands", []),
        claims=[Claim(text=str(c.get("text", "")), command=c.get("command")) for c in summary.get("claims", [])],
        budgets=Budgets(
            steps_used=len(state.get("plan", [])), steps_limit=limits.max_steps,
            seconds_used=time.time() - state.get("started_at", time.time()), seconds_limit=limits.max_seconds,
            tokens_used=state.get("tokens", 0), tokens_limit=limits.max_tokens,
            commands_per_step_limit=limits.max_commands_per_step,
            max_commands_in_a_step=max((s.get("turns", 0) for s in steps.values()), default=0),
        ),
        lessons_used=lessons_used,
        lessons_recorded=recorded,
        processes=left,
    )
