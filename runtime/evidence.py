"""Gathering the gate's evidence from the journal, the state and the workspace.

Parts: `PS_PROBE` and `list_processes()` (what runs in the sandbox, read from
/proc so it works on busybox and Debian alike), `commands_from_journal()`,
and `build_evidence()`. The model's own words enter only as claims to check.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from common.events import (
    ApprovalRecorded,
    CommandProposed,
    Event,
    ExecFinished,
    LessonsUsed,
    VerdictRecorded,
)
from common.walk import read_rel, shown
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
from runtime.workspace import FileState, diff, manifest
from sandbox.base import Sandbox

PS_PROBE = (
    ": TETHER_PS; for p in /proc/[0-9]*; do i=${p#/proc/}; "
    "c=$(tr '\\000' ' ' < $p/cmdline 2>/dev/null); [ -n \"$c\" ] && echo \"$i $c\"; done"
)
TEXT_CAP = 65_536
WATCHDOG = re.compile(r"^timeout -s KILL \S+ (?:bash|sh) -c (.*)$", re.S)
"""The sandbox's own `timeout` wrapper; busybox's keeps a watchdog alive until the timeout."""


def _probe(sandbox: Sandbox) -> dict[str, str] | None:
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


def list_processes(sandbox: Sandbox, settle_s: float = 0.3) -> dict[str, str] | None:
    """pid -> command line of every process in the sandbox but the probe itself.

    A process seen once may be the tail of the previous exec still exiting, so
    a second probe after `settle_s` keeps only what is still there.
    """
    first = _probe(sandbox)
    if not first:
        return first
    time.sleep(settle_s)
    second = _probe(sandbox)
    if second is None:
        return None
    return {pid: cmd for pid, cmd in second.items() if first.get(pid) == cmd}


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


def _watchdog(cmd: str, ran: set[str]) -> bool:
    """A sandbox timeout wrapper around a command of this run (not something the agent left)."""
    m = WATCHDOG.match(cmd)
    return bool(m) and (m.group(1).strip() in ran or "TETHER_PS" in m.group(1))


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
    processes: dict[str, str] | None,
    baseline: dict[str, str] | None,
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
    if processes is not None:
        base = baseline or {}
        ran = {c.command.strip() for c in commands}
        left = [
            f"{pid} {cmd}" for pid, cmd in processes.items()
            if base.get(pid) != cmd and pid != "1" and not _watchdog(cmd, ran)
        ]
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
        changed_texts=_texts(workspace, [*raw.added, *raw.modified]),
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
