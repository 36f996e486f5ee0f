"""Gathering the gate's evidence from the journal, the state and the workspace.

Parts: `PS_PROBE` and `list_processes()` (what runs in the sandbox, read from
/proc so it works on busybox and Debian alike), `commands_from_journal()`,
and `build_evidence()`. The model's own words enter only as claims to check.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from guardian.gate_evidence import (
    Budgets,
    Claim,
    CommandEvidence,
    Evidence,
    PlanStepEvidence,
    StepEvidence,
    goal_flags,
)
from runtime.config import RunConfig
from runtime.journal import (
    ApprovalRecorded,
    CommandProposed,
    Event,
    ExecFinished,
    LessonsUsed,
    VerdictRecorded,
)
from runtime.workspace import FileState, diff, manifest
from sandbox.base import Sandbox

PS_PROBE = (
    ": TETHER_PS; for p in /proc/[0-9]*; do i=${p#/proc/}; "
    "c=$(tr '\\000' ' ' < $p/cmdline 2>/dev/null); [ -n \"$c\" ] && echo \"$i $c\"; done"
)
TEXT_CAP = 65_536


def list_processes(sandbox: Sandbox) -> dict[str, str] | None:
    """pid -> command line of every process in the sandbox but the probe itself."""
    try:
        res = sandbox.exec(PS_PROBE, timeout_s=20)
    except Exception:  # a dead sandbox cannot list anything: the gate treats None as a fail
        return None
    if res.exit_code != 0:
        return None
    out: dict[str, str] = {}
    for line in res.output.splitlines():
        pid, _, cmd = line.strip().partition(" ")
        if pid.isdigit() and "TETHER_PS" not in cmd and not cmd.startswith("tr "):
            out[pid] = cmd.strip()
    return out


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
            cmds[e.cmd_id].update(executed=True, exit_code=e.exit_code, output=e.output, changed=e.changed)
    return [CommandEvidence.model_validate(c) for c in cmds.values()]


def _texts(root: Path, paths: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for rel in paths:
        path = root / rel
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as fh:
                out[rel] = fh.read(TEXT_CAP).decode("utf-8", errors="replace")
    return out


def build_evidence(
    state: dict[str, Any],
    events: Sequence[Event],
    *,
    workspace: Path,
    start_manifest: dict[str, FileState],
    processes: dict[str, str] | None,
    baseline: dict[str, str] | None,
    limits: RunConfig,
    lessons_used: list[str],
    mount: str,
) -> Evidence:
    """The run's evidence, from what happened rather than what was said."""
    goal = state.get("goal", "")
    wants_change, artifacts = goal_flags(goal)
    end = manifest(workspace)
    delta = diff(start_manifest, end)
    steps = state.get("steps", {})
    summary = state.get("summary") or {}
    left = None
    if processes is not None:
        base = baseline or {}
        left = [f"{pid} {cmd}" for pid, cmd in processes.items() if base.get(pid) != cmd and pid != "1"]
    recorded = sorted({i for e in events if isinstance(e, LessonsUsed) for i in e.ids})
    return Evidence(
        goal=goal,
        wants_change=wants_change,
        artifacts=artifacts,
        plan=[PlanStepEvidence.model_validate(p) for p in state.get("plan", [])],
        plan_valid=bool(state.get("plan_valid")),
        steps=[StepEvidence(id=sid, status=s["status"], reason=s.get("reason", ""), commands=s.get("commands", [])) for sid, s in steps.items()],
        commands=commands_from_journal(events),
        claimed_reads=sorted({f for s in steps.values() for f in s.get("files_read", [])}),
        claimed_changes=sorted({f for s in steps.values() for f in s.get("files_changed", [])}),
        diff_added=delta.added,
        diff_modified=delta.modified,
        diff_deleted=delta.deleted,
        changed_texts=_texts(workspace, [*delta.added, *delta.modified]),
        workspace_files=sorted(end),
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
