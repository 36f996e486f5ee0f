"""The run journal's event types: one pydantic model per kind, joined in `Event`.

Parts: the event models, the `Event` union, `read_events()`. They live in the
leaf package so every layer (graphs writes them, runtime and memory read them,
reports render them) shares one definition; the writer is common.journal.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter

from tether.common.errors import StateFileError
from tether.common.files import unreadable

log = logging.getLogger(__name__)


class _Base(BaseModel):
    key: str
    """Stable id of the event; a second event with the same key is not written."""
    ts: float = Field(default_factory=time.time)


class RunStarted(_Base):
    kind: Literal["run_start"] = "run_start"
    run_id: str
    goal: str
    workspace: str
    model: str
    shadow: bool = False
    resumed: bool = False


class PlanAccepted(_Base):
    kind: Literal["plan"] = "plan"
    attempt: int
    steps: list[dict[str, Any]]


class PlanRejected(_Base):
    kind: Literal["plan_rejected"] = "plan_rejected"
    attempt: int
    error: str
    steps: Any = None


class CommandProposed(_Base):
    kind: Literal["command"] = "command"
    cmd_id: str
    step: str
    tool: Literal["run_shell", "read_file"]
    command: str
    cwd: str


class VerdictRecorded(_Base):
    kind: Literal["verdict"] = "verdict"
    cmd_id: str
    decision: Literal["allow", "ask", "deny"]
    enforced: Literal["allow", "ask", "deny"]
    """What was enforced: differs from `decision` in shadow mode or when trust auto-approves."""
    rules: list[str] = Field(default_factory=list)
    kinds: list[str] = Field(default_factory=list)
    categories: list[str] = Field(default_factory=list)
    reason: str = ""


class ApprovalRecorded(_Base):
    kind: Literal["approval"] = "approval"
    cmd_id: str
    approved: bool
    by: Literal["person", "yes-flag", "trust", "no-person"]


class ExecStarted(_Base):
    kind: Literal["exec_start"] = "exec_start"
    cmd_id: str


class ExecFinished(_Base):
    kind: Literal["exec"] = "exec"
    cmd_id: str
    exit_code: int
    output: str
    duration_s: float
    timed_out: bool = False
    changed: list[str] = Field(default_factory=list)
    """Workspace paths this command added, modified or deleted."""
    stray: list[str] = Field(default_factory=list)
    """Workspace changes seen before this command started that no command made."""
    secrets: list[str] = Field(default_factory=list)
    """Secret kinds seen in the whole output stream (before it was cut to head and tail)."""
    unknown: bool = False
    """Started before a kill and never finished: not run again on resume, its effect is unknown."""


class EgressConnection(_Base):
    kind: Literal["egress"] = "egress"
    cmd_id: str
    """The command whose grant the connection was asked under."""
    method: str
    """CONNECT, GET or HEAD (`-` when the request could not be read)."""
    host: str
    port: int
    allowed: bool
    reason: str
    """Why it was refused, or how it was allowed (and why it was closed, when the proxy cut it)."""
    address: str = ""
    """The address the host resolved to and the proxy connected to (allowed only)."""
    bytes_up: int = 0
    bytes_down: int = 0
    seconds: float = 0.0


class StepChanged(_Base):
    kind: Literal["step"] = "step"
    step: str
    status: Literal["pending", "running", "done", "failed", "blocked", "skipped"]
    reason: str = ""
    summary: str = ""
    files_read: list[str] = Field(default_factory=list)
    files_changed: list[str] = Field(default_factory=list)
    evidence: str = ""


class Replanned(_Base):
    kind: Literal["replan"] = "replan"
    round: int
    accepted: bool
    steps: list[dict[str, Any]] = Field(default_factory=list)
    replace: dict[str, str] = Field(default_factory=dict)
    error: str = ""


class SummaryWritten(_Base):
    kind: Literal["summary"] = "summary"
    text: str
    files: list[str] = Field(default_factory=list)
    commands: list[str] = Field(default_factory=list)
    claims: list[dict[str, Any]] = Field(default_factory=list)
    lessons_used: list[str] = Field(default_factory=list)
    """Memory lessons the model says it relied on."""


class LessonsUsed(_Base):
    kind: Literal["lessons"] = "lessons"
    ids: list[str]


class GateRecorded(_Base):
    kind: Literal["gate"] = "gate"
    passed: bool
    results: list[dict[str, Any]]
    review: list[str] = Field(default_factory=list)
    checks: list[dict[str, Any]] = Field(default_factory=list)
    proof: str = "none"
    """Where the proof that the change works came from: person, project, run or none."""
    proof_detail: str = ""
    project: list[dict[str, Any]] = Field(default_factory=list)
    """The project's own tests, per test id, before and after the run."""


class ModelAnswerRefused(_Base):
    kind: Literal["model_answer"] = "model_answer"
    site: str
    """planner, actor, replanner, summarizer, ..."""
    step: str = ""
    turn: int | None = None
    problem: str
    """Why the answer was refused or a tool call in it could not be read."""
    size: int = 0
    """The answer's size in bytes (text and tool-call arguments)."""
    raw: str = ""
    """The answer as it came (head and tail, bounded), so a person sees what the model said."""


class RunEnded(_Base):
    kind: Literal["run_end"] = "run_end"
    status: Literal["success", "self-verified", "needs-review", "failed", "blocked", "interrupted"]
    reason: str = ""


Event = Annotated[
    RunStarted | PlanAccepted | PlanRejected | CommandProposed | VerdictRecorded
    | ApprovalRecorded | ExecStarted | ExecFinished | EgressConnection | StepChanged | Replanned
    | SummaryWritten | LessonsUsed | GateRecorded | ModelAnswerRefused | RunEnded,
    Field(discriminator="kind"),
]
_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


_warned: set[tuple[str, int]] = set()


def read_events(path: Path) -> list[Event]:
    """Every event in the journal; unreadable lines are skipped, and named in a warning.

    A torn last line (a crash mid-write) is expected and skipped quietly.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as e:
        raise unreadable(path, e, StateFileError, "check its permissions") from e
    events: list[Event] = []
    bad = 0
    # errors="replace": a line torn inside a multi-byte character must not hide the whole journal
    lines = raw.decode("utf-8", errors="replace").splitlines()
    for i, line in enumerate(lines):
        try:
            events.append(_ADAPTER.validate_json(line))
        except ValueError:
            torn = i == len(lines) - 1 and not raw.endswith(b"\n")
            bad += 0 if torn or not line.strip() else 1
    if bad and (str(path), bad) not in _warned:
        _warned.add((str(path), bad))
        log.warning(
            "run journal %s: skipped %d unreadable line(s) (not events Tether wrote); the rest is used", path, bad
        )
    return events
