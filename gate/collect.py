"""Collecting the gate's evidence: one collector per `Evidence` field, from what happened.

Parts: `Sources` (everything a collector may read: the graph state, the
journal, the workspace manifests before and now, the sandbox), the
`collects(field)` decorator, `collect(sources)` (runs every collector and
returns the `Evidence`), `list_processes()` and `commands_from_journal()`.
The model's own words enter only as claims to check. Adding an evidence
field is one field in gate.evidence and one collector here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from tether.common.budgets import RunBudgets
from tether.common.events import (
    ApprovalRecorded,
    CommandProposed,
    Event,
    ExecFinished,
    LessonsUsed,
    VerdictRecorded,
)
from tether.common.hostexec_check import HostExecChange, Tree, host_exec_changes
from tether.common.manifest import FileState, WorkspaceDiff, diff
from tether.common.snapshot import SNAPSHOT_DIR
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
from tether.gate.goal import asks_to_add_tests
from tether.gate.known import KnownCache, shown_again, workspace_values
from tether.gate.rerun import is_test_path
from tether.gate.scan import (
    ChangeTracker,
    artifact_types,
    escaping_links,
    file_secrets,
    left_outside,
    outside_files,
    tampering,
)
from tether.sandbox.base import Sandbox
from tether.sandbox.processes import Proc, left_running

TEXT_CAP = 65_536


@dataclass
class Sources:
    """What the collectors read; derived views are computed once."""

    state: dict[str, Any]
    events: Sequence[Event]
    workspace: Path
    start: dict[str, FileState]
    end: dict[str, FileState]
    run_dir: Path
    sandbox: Sandbox
    budgets: RunBudgets
    mount: str
    baseline: list[Proc] | None = None
    lessons_used: list[str] = field(default_factory=list)
    tracker: ChangeTracker = field(default_factory=ChangeTracker)
    known: KnownCache | None = None
    """Secret values of the bytes already scanned while the run worked (gate.known.scan_known)."""

    @cached_property
    def delta(self) -> WorkspaceDiff:
        return diff(self.start, self.end)

    @cached_property
    def written(self) -> list[str]:
        """Files the run added or changed, caches left out."""
        return real_changes([*self.delta.added, *self.delta.modified])

    @cached_property
    def commands(self) -> list[CommandEvidence]:
        return commands_from_journal(self.events)

    @cached_property
    def steps(self) -> dict[str, Any]:
        return self.state.get("steps", {})

    @cached_property
    def summary(self) -> dict[str, Any]:
        return self.state.get("summary") or {}

    @cached_property
    def goal(self) -> tuple[bool, list[str]]:
        return goal_flags(self.state.get("goal", ""))

    @cached_property
    def review(self) -> tuple[list[str], str]:
        goal = self.state.get("goal", "")
        additions = [p for p in self.goal[1] if is_test_path(p)] if asks_to_add_tests(goal) else []
        return tampering(self.start, self.end, self.commands, self.run_dir, self.workspace, additions)

    @cached_property
    def changed_texts(self) -> dict[str, str]:
        """Leading text of each file the run wrote, read by descriptor (no symlink followed, no FIFO opened)."""
        out: dict[str, str] = {}
        for rel in self.written:
            data = read_rel(self.workspace, rel, TEXT_CAP)
            if data is not None:
                out[shown(rel)] = data.decode("utf-8", errors="replace")
        return out

    @cached_property
    def outside(self) -> list[str] | None:
        """What the run left under the sandbox's /tmp and /dev/shm; None when it could not be listed."""
        return outside_files(self.sandbox)


Collector = Callable[[Sources], Any]
_COLLECTORS: dict[str, Collector] = {}


def collects(name: str) -> Callable[[Collector], Collector]:
    """Register `fn(sources)` as the collector of `Evidence.<name>`."""
    if name not in Evidence.model_fields:
        msg = f"Evidence has no field {name!r}"
        raise ValueError(msg)

    def deco(fn: Collector) -> Collector:
        _COLLECTORS[name] = fn
        return fn

    return deco


def collect(sources: Sources) -> Evidence:
    """Every collected field, as one `Evidence`."""
    return Evidence.model_validate({name: fn(sources) for name, fn in _COLLECTORS.items()})


def list_processes(sandbox: Sandbox, baseline: list[Proc] | None = None, settle_s: float = 3.0,
                   poll_s: float = 0.15) -> list[Proc] | None:
    """The sandbox's processes (but Tether's probe); None when they cannot be listed.

    With a `baseline`, a listing that shows anything beyond it is taken again
    every `poll_s` until it shows nothing beyond it or `settle_s` has passed:
    a process counts as left running only if it is still there then (the
    tail of the last command exiting, busybox `timeout`'s watchdog, which
    polls each second, are gone by then, under load too; most are gone at
    the first polls, so only a real leftover waits the whole `settle_s`).
    Whatever the last listing shows counts, new pids included (a leftover
    that keeps re-spawning under new pids is still a leftover).
    """
    try:
        now = sandbox.processes()
        deadline = time.monotonic() + settle_s
        while baseline is not None and left_running(now, baseline) and time.monotonic() < deadline:
            time.sleep(min(poll_s, max(0.0, deadline - time.monotonic())))
            now = sandbox.processes()
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
            cmds[e.cmd_id].update(executed=True, exit_code=e.exit_code, unknown=e.unknown, output=e.output,
                                  changed=e.changed, secrets=e.secrets)
    return [CommandEvidence.model_validate(c) for c in cmds.values()]


# --- the goal, the plan, the steps -----------------------------------------------------------

@collects("goal")
def _goal(s: Sources) -> str:
    return s.state.get("goal", "")


@collects("wants_change")
def _wants_change(s: Sources) -> bool:
    return s.goal[0]


@collects("artifacts")
def _artifacts(s: Sources) -> list[str]:
    return s.goal[1]


@collects("plan")
def _plan(s: Sources) -> list[PlanStepEvidence]:
    return [PlanStepEvidence.model_validate(p) for p in s.state.get("plan", [])]


@collects("plan_valid")
def _plan_valid(s: Sources) -> bool:
    return bool(s.state.get("plan_valid"))


@collects("steps")
def _steps(s: Sources) -> list[StepEvidence]:
    return [StepEvidence(id=sid, status=st["status"], reason=st.get("reason", ""), commands=st.get("commands", []))
            for sid, st in s.steps.items()]


@collects("commands")
def _commands(s: Sources) -> list[CommandEvidence]:
    return s.commands


@collects("claimed_reads")
def _claimed_reads(s: Sources) -> list[str]:
    return sorted({f for st in s.steps.values() for f in st.get("files_read", [])})


@collects("claimed_changes")
def _claimed_changes(s: Sources) -> list[str]:
    return sorted({f for st in s.steps.values() for f in st.get("files_changed", [])})


@collects("budgets")
def _budgets(s: Sources) -> Budgets:
    return Budgets(
        limits=s.budgets, steps_used=len(s.state.get("plan", [])),
        seconds_used=time.time() - s.state.get("started_at", time.time()), tokens_used=s.state.get("tokens", 0),
        max_commands_in_a_step=max((st.get("turns", 0) for st in s.steps.values()), default=0),
    )


@collects("lessons_used")
def _lessons_used(s: Sources) -> list[str]:
    return s.lessons_used


@collects("lessons_recorded")
def _lessons_recorded(s: Sources) -> list[str]:
    return sorted({i for e in s.events if isinstance(e, LessonsUsed) for i in e.ids})


# --- the summary ------------------------------------------------------------------------------

@collects("summary")
def _summary(s: Sources) -> str | None:
    return s.summary.get("text") or None


@collects("summary_files")
def _summary_files(s: Sources) -> list[str]:
    return s.summary.get("files", [])


@collects("summary_commands")
def _summary_commands(s: Sources) -> list[str]:
    return s.summary.get("commands", [])


@collects("claims")
def _claims(s: Sources) -> list[Claim]:
    return [Claim(text=str(c.get("text", "")), command=c.get("command")) for c in s.summary.get("claims", [])]


# --- the workspace ----------------------------------------------------------------------------

@collects("diff_added")
def _diff_added(s: Sources) -> list[str]:
    return s.delta.shown().added


@collects("diff_modified")
def _diff_modified(s: Sources) -> list[str]:
    return s.delta.shown().modified


@collects("diff_deleted")
def _diff_deleted(s: Sources) -> list[str]:
    return s.delta.shown().deleted


@collects("changed_texts")
def _changed_texts(s: Sources) -> dict[str, str]:
    return s.changed_texts


@collects("known_secrets")
def _known_secrets(s: Sources) -> list[str]:
    outputs = [(f"output of `{c.command[:40]}`", c.output) for c in s.commands if c.executed]
    return shown_again(workspace_values(s.workspace, s.end, s.known), outputs, s.changed_texts)


@collects("workspace_files")
def _workspace_files(s: Sources) -> list[str]:
    return sorted(shown(p) for p in s.end)


@collects("empty_files")
def _empty_files(s: Sources) -> list[str]:
    return sorted({shown(p) for m in (s.start, s.end) for p, st in m.items() if st.size == 0 and st.link is None})


@collects("workspace_mount")
def _workspace_mount(s: Sources) -> str:
    return s.mount


@collects("stray_changes")
def _stray_changes(s: Sources) -> list[str]:
    journaled = {p for e in s.events if isinstance(e, ExecFinished) for p in e.stray}
    return sorted({*journaled, *s.tracker.stray(s.end)})


@collects("escaping_links")
def _escaping_links(s: Sources) -> list[str]:
    return escaping_links(s.end, s.mount)


@collects("artifact_types")
def _artifact_types(s: Sources) -> dict[str, str]:
    return artifact_types(s.workspace, s.goal[1], s.mount)


@collects("review")
def _review(s: Sources) -> list[str]:
    return [*s.review[0], *left_outside(s.outside or [])]


@collects("review_diff")
def _review_diff(s: Sources) -> str:
    return s.review[1]


@collects("host_exec")
def _host_exec(s: Sources) -> list[HostExecChange]:
    """The gate's look at places that run on the host (the runner looks again once the sandbox is gone)."""
    files = s.run_dir / SNAPSHOT_DIR / "files"
    before = Tree(files if files.is_dir() else None)
    return host_exec_changes(s.start, s.end, before, Tree(s.workspace), mount=s.mount, host_root=str(s.workspace))


@collects("file_secrets")
def _file_secrets(s: Sources) -> list[str]:
    return file_secrets(s.workspace, s.written, int(s.state.get("started_at", 0) * 1e9))


# --- the sandbox ------------------------------------------------------------------------------

@collects("processes")
def _processes(s: Sources) -> list[str] | None:
    now = list_processes(s.sandbox, s.baseline)
    if now is None or s.baseline is None:
        return None
    return [p.describe() for p in left_running(now, s.baseline)]


@collects("outside_files")
def _outside_files(s: Sources) -> list[str] | None:
    return s.outside
