"""One run, read back from its folder for `tether show` and `tether report`.

Parts: `load_journal()` (events plus the count of lines it could not read),
`load_run()` (a `RunView`: the plan with each step's status history and
dependencies, every command with verdict, approval and result, the gate,
lessons used and this run's revisions of them, cost, shadow audit, and what
to do next). Works on any run folder: finished, failed, interrupted, still
running, or with a damaged journal (`warnings` says what is missing).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, TypeAdapter

from tether.common.events import (
    ApprovalRecorded,
    CommandProposed,
    EgressConnection,
    Event,
    ExecFinished,
    ExecStarted,
    GateRecorded,
    LessonsUsed,
    ModelAnswerRefused,
    PlanAccepted,
    PlanRejected,
    Replanned,
    RunEnded,
    RunStarted,
    StepChanged,
    SummaryWritten,
    VerdictRecorded,
)
from tether.runtime.run_ids import UnknownRunError, run_dir
from tether.runtime.views.changes_view import ChangesView, load_changes
from tether.runtime.views.run_list import read_json, run_line

DIFF_BYTES = 200_000
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_EVENT: TypeAdapter[Event] = TypeAdapter(Event)


class StepView(BaseModel):
    id: str
    description: str = ""
    depends_on: list[str] = Field(default_factory=list)
    verify: str = ""
    status: str = "pending"
    reason: str = ""
    summary: str = ""
    history: list[str] = Field(default_factory=list)
    """Every status the step went through, in order."""
    blocked_by: str = ""
    """The failed step that blocked this one (at any time in the run)."""
    blocked_via: list[str] = Field(default_factory=list)
    """Its dependencies that were failed or blocked then: the path the cascade took."""
    replaced_by: str = ""
    repair_of: str = ""
    commands: list[str] = Field(default_factory=list)


class CommandView(BaseModel):
    id: str
    step: str
    tool: str = "run_shell"
    command: str
    cwd: str = ""
    ts: float | None = None
    """When the model proposed it."""
    decision: str | None = None
    enforced: str | None = None
    rules: list[str] = Field(default_factory=list)
    verdict_reason: str = ""
    approval: str | None = None
    """approved/refused by person, yes-flag, trust or no-person."""
    exit_code: int | None = None
    output: str = ""
    duration_s: float | None = None
    timed_out: bool = False
    changed: list[str] = Field(default_factory=list)
    network: list[str] = Field(default_factory=list)
    """Each connection it asked the egress proxy for: `allowed host:port (N B up, M B down)` or `refused ...: why`."""
    state: str = "proposed"
    """ran, denied, refused, running (started, no result), awaiting (an ask), proposed."""


class RunView(BaseModel):
    run_id: str
    goal: str = ""
    workspace: str = ""
    model: str = ""
    status: str
    reason: str = ""
    shadow: bool = False
    started_at: float | None = None
    duration_s: float | None = None
    steps: list[StepView] = Field(default_factory=list)
    commands: list[CommandView] = Field(default_factory=list)
    plan_rejections: list[str] = Field(default_factory=list)
    answers: list[dict[str, Any]] = Field(default_factory=list)
    """Model answers refused or flagged (too large, nested too deep, malformed tool calls), each with its raw text
    (bounded): site, step, turn, problem, size, raw."""
    replans: list[dict[str, Any]] = Field(default_factory=list)
    gate: dict[str, Any] | None = None
    summary: dict[str, Any] | None = None
    lessons: list[dict[str, Any]] = Field(default_factory=list)
    """id, title, insight, and this run's revisions (verdict, status, before, after)."""
    lessons_written: list[str] = Field(default_factory=list)
    memory_error: str = ""
    cost: dict[str, Any] = Field(default_factory=dict)
    tests_diff: str = ""
    """The gate's diff of test files the run changed (`tests.diff`), capped; a reason to review."""
    shadow_audit: dict[str, Any] | None = None
    changes: ChangesView | None = None
    """What the run changed in the workspace, and what of it runs on the person's machine (None until it ends)."""
    next: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


def load_journal(path: Path) -> tuple[list[Event], int]:
    """Every readable event, and how many non-empty lines could not be read."""
    if not path.is_file():
        return [], 0
    events: list[Event] = []
    bad = 0
    with path.open("rb") as fh:
        for raw in fh:
            if not raw.strip():
                continue
            try:
                events.append(_EVENT.validate_json(raw.decode("utf-8", errors="replace")))
            except ValueError:
                bad += 1
    return events, bad


def _plan(events: list[Event]) -> dict[str, StepView]:
    steps: dict[str, StepView] = {}
    plans = [e for e in events if isinstance(e, PlanAccepted)]
    for raw in plans[-1].steps if plans else []:
        steps[str(raw.get("id"))] = StepView(
            id=str(raw.get("id")),
            description=str(raw.get("description", "")),
            depends_on=[str(d) for d in raw.get("depends_on") or []],
            verify=str(raw.get("verify") or ""),
        )
    last_failed = ""
    for e in events:
        if isinstance(e, Replanned) and e.accepted:
            for raw in e.steps:
                sid = str(raw.get("id"))
                steps[sid] = StepView(
                    id=sid,
                    description=str(raw.get("description", "")),
                    depends_on=[str(d) for d in raw.get("depends_on") or []],
                    verify=str(raw.get("verify") or ""),
                )
            for old, new in e.replace.items():
                if old in steps:
                    steps[old].replaced_by = new
                if new in steps:
                    steps[new].repair_of = old
                for s in steps.values():  # dependents of a replaced step now wait on its repair
                    if s.id != new:
                        s.depends_on = [new if d == old else d for d in s.depends_on]
        elif isinstance(e, StepChanged):
            s = steps.setdefault(e.step, StepView(id=e.step))
            s.status, s.reason = e.status, e.reason
            s.summary = e.summary or s.summary
            if not s.history or s.history[-1] != e.status:
                s.history.append(e.status)
            if e.status == "failed":
                last_failed = e.step
            elif e.status == "blocked" and last_failed:
                s.blocked_by = last_failed
                s.blocked_via = [
                    d for d in s.depends_on if d in steps and steps[d].status in ("failed", "blocked")
                ] or [last_failed]
    return steps


def _commands(events: list[Event]) -> dict[str, CommandView]:
    cmds: dict[str, CommandView] = {}
    for e in events:
        if isinstance(e, CommandProposed):
            cmds[e.cmd_id] = CommandView(id=e.cmd_id, step=e.step, tool=e.tool, command=e.command, cwd=e.cwd, ts=e.ts)
            continue
        c = cmds.get(getattr(e, "cmd_id", ""))
        if c is None:
            continue
        if isinstance(e, VerdictRecorded):
            c.decision, c.enforced, c.rules, c.verdict_reason = e.decision, e.enforced, e.rules, e.reason
            c.state = "denied" if e.enforced == "deny" else "awaiting" if e.enforced == "ask" else c.state
        elif isinstance(e, ApprovalRecorded):
            c.approval = f"{'approved' if e.approved else 'refused'} ({e.by})"
            c.state = "proposed" if e.approved else "refused"
        elif isinstance(e, ExecStarted):
            c.state = "running"
        elif isinstance(e, EgressConnection):
            c.network.append(f"allowed {e.host}:{e.port} ({e.bytes_up} B up, {e.bytes_down} B down)" if e.allowed
                             else f"refused {e.host}:{e.port}: {e.reason}")
        elif isinstance(e, ExecFinished):
            c.exit_code, c.output, c.duration_s, c.timed_out, c.changed = (
                e.exit_code,
                e.output,
                e.duration_s,
                e.timed_out,
                e.changed,
            )
            c.state = "ran"
    return cmds


def _lessons(meta: dict[str, Any], events: list[Event], memory_dir: Path, run_id: str) -> list[dict[str, Any]]:
    """Lessons put into this run's prompts, with the revisions this run caused."""
    from tether.memory.errors import MemoryStoreError
    from tether.memory.lesson import lesson_from_markdown

    ids = list(meta.get("lesson_ids") or [])
    for e in events:
        if isinstance(e, LessonsUsed):
            ids += [i for i in e.ids if i not in ids]
        elif isinstance(e, SummaryWritten):
            ids += [i for i in e.lessons_used if i not in ids]
    out = []
    for lesson_id in ids:
        if not _SAFE_ID.match(lesson_id):  # an id is a file name under lessons/: never a path
            continue
        entry: dict[str, Any] = {"id": lesson_id, "title": "", "insight": "", "revisions": []}
        path = memory_dir / "lessons" / f"{lesson_id}.md"
        try:
            lesson = lesson_from_markdown(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, MemoryStoreError):
            entry["missing"] = True
            out.append(entry)
            continue
        entry |= {"title": lesson.title, "insight": lesson.insight, "status": lesson.status}
        for i, h in enumerate(lesson.history):
            if h.run_id != run_id:
                continue
            later = [x for x in lesson.history[i + 1:] if x.status == "accepted"]
            text_after = later[0].before if later else lesson.insight  # the insight right after this entry
            before, after = (h.before, text_after) if h.status == "accepted" else (text_after, h.proposed)
            if h.status == "proposed" and not h.proposed:  # a kept text (confirmed) or a proposed retirement
                after = text_after if h.verdict == "confirmed" else ""
            entry["revisions"].append({"verdict": h.verdict, "status": h.status, "reason": h.reason,
                                       "evidence": h.evidence, "before": before, "after": after})
        out.append(entry)
    return out


def _next(view: RunView, awaiting: CommandView | None) -> list[str]:
    rid = view.run_id
    if awaiting is not None:
        return [f"tether approve {rid}", f"tether deny {rid}"]
    if view.shadow:  # it changed only its copy: look at the changes, then bring them over (or not)
        if view.status in ("interrupted", "running"):
            return [f"tether resume {rid}"]
        return [f"tether apply {rid} --dry-run", f"tether apply {rid}"]
    if view.status == "success":
        return []
    if view.status in ("needs-review", "self-verified"):  # the gate wants a person: look, then keep it or undo it
        return [f"tether report {rid}", f"tether rollback {rid}"]
    if view.status in ("interrupted", "running"):
        return [f"tether resume {rid}"] + ([f"tether rollback {rid}"] if view.status == "interrupted" else [])
    return [f"tether rollback {rid}"]


def load_run(runs_dir: Path, run_id: str, memory_dir: Path, *, with_diff: bool = False) -> RunView:
    """The run's view (with the content diff when asked); UnknownRunError when the folder does not exist."""
    folder = run_dir(runs_dir, run_id)
    if not folder.is_dir():
        msg = f"no run '{run_id}' under {runs_dir}; list runs with `tether runs`"
        raise UnknownRunError(msg)
    line = run_line(folder)
    meta = read_json(folder / "run.json") or {}
    events, bad = load_journal(folder / "journal.jsonl")
    warnings = [] if meta else ["run.json is missing or unreadable: goal and status come from the journal"]
    if bad:
        warnings.append(f"{bad} journal line(s) could not be read and are left out")
    if not events:
        warnings.append("the journal is missing or empty: nothing of the run can be shown")
    starts = [e for e in events if isinstance(e, RunStarted)]
    ends = [e for e in events if isinstance(e, RunEnded)]
    status = line.status if meta else (ends[-1].status if ends else "running")
    view = RunView(
        run_id=run_id,
        goal=str(meta.get("goal") or (starts[0].goal if starts else "")),
        status=status,
        reason=str(meta.get("reason") or (ends[-1].reason if ends else "")),
        workspace=str(meta.get("workspace") or ""),
        model=str(meta.get("model_spec") or (starts[0].model if starts else "")),
        shadow=bool(meta.get("shadow") or (starts and starts[0].shadow)),
        started_at=line.started_at if meta else (starts[0].ts if starts else None),
        duration_s=line.duration_s,
        warnings=warnings,
    )
    steps, cmds = _plan(events), _commands(events)
    for c in cmds.values():
        if c.step in steps:
            steps[c.step].commands.append(c.id)
    view.steps, view.commands = list(steps.values()), list(cmds.values())
    view.plan_rejections = [e.error for e in events if isinstance(e, PlanRejected)]
    view.answers = [e.model_dump(include={"site", "step", "turn", "problem", "size", "raw"}) for e in events
                    if isinstance(e, ModelAnswerRefused)]
    view.replans = [
        e.model_dump(include={"round", "accepted", "replace", "error"}) for e in events if isinstance(e, Replanned)
    ]
    gates = [e for e in events if isinstance(e, GateRecorded)]
    view.gate = {"passed": gates[-1].passed, "results": gates[-1].results, "review": gates[-1].review,
                 "checks": gates[-1].checks, "proof": gates[-1].proof, "proof_detail": gates[-1].proof_detail,
                 "project": gates[-1].project} if gates else None
    summaries = [e for e in events if isinstance(e, SummaryWritten)]
    view.tests_diff = _tests_diff(folder / "tests.diff")
    view.changes = load_changes(folder, with_diff)
    view.summary = summaries[-1].model_dump(exclude={"key", "kind", "ts"}) if summaries else None
    memory = read_json(folder / "memory.json") or {}
    view.lessons_written = [str(x) for x in memory.get("lessons_written") or []]
    view.memory_error = str(memory.get("memory_error") or "")
    view.lessons = _lessons(meta, events, memory_dir, run_id)
    totals = meta.get("totals") if isinstance(meta.get("totals"), dict) else {}
    view.cost = {"model_calls": totals.get("model_calls"), "tokens": totals.get("tokens"),
                 "memory_calls": memory.get("memory_calls"), "wall_s": view.duration_s,
                 "commands": len(cmds), "exec_s": round(sum(c.duration_s or 0 for c in cmds.values()), 3)}
    awaiting = (
        next((c for c in reversed(view.commands) if c.state == "awaiting"), None) if status == "interrupted" else None
    )
    view.next = _next(view, awaiting)
    if view.shadow and (folder / "shadow.jsonl").is_file():
        view.shadow_audit = _audit(runs_dir, run_id, view)
    return view


def _tests_diff(path: Path) -> str:
    """The first DIFF_BYTES of the gate's tests.diff, or "" when there is none."""
    try:
        with path.open("rb") as fh:
            data = fh.read(DIFF_BYTES + 1)
    except OSError:
        return ""
    text = data[:DIFF_BYTES].decode("utf-8", errors="replace")
    return text + ("\n… (cut; the whole diff is in tests.diff)" if len(data) > DIFF_BYTES else "")


def _audit(runs_dir: Path, run_id: str, view: RunView) -> dict[str, Any] | None:
    from tether.runtime.trust.audit import ShadowLogError, audit_run

    try:
        return audit_run(runs_dir, run_id).as_json()
    except (ShadowLogError, OSError) as e:
        view.warnings.append(f"shadow log unreadable: {e}")
        return None
