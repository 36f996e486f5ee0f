"""Seams of the runner that memory and trust plug into.

Parts: `RunInfo` (what a hook learns before the run), `MemoryContext` (what
memory hands back: prompt text and the ids of the lessons in it),
`RunRecord` (a finished or paused run), the `RunHooks` protocol (around the
run, plus graphs.context.Approvals at each ask) and `NoHooks`, its
do-nothing implementation. Implementations need not inherit the protocol;
they only need its methods.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, Field

from tether.graphs.approvals import Approvals, NoApprovals

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from tether.guardian.verdict import Verdict

RunStatus = Literal["success", "self-verified", "needs-review", "failed", "blocked", "interrupted"]


class RunInfo(BaseModel):
    run_id: str
    goal: str
    workspace: Path
    run_dir: Path
    shadow: bool = False


class MemoryContext(BaseModel):
    text: str = ""
    """Injected into the planner and actor prompts."""
    lesson_ids: list[str] = Field(default_factory=list)
    """Lessons in `text`; journaled so the gate's R17 and the revision can find them."""


class RunRecord(BaseModel):
    """What a run produced; `after_run` receives it and the CLI prints it."""

    run_id: str
    goal: str
    workspace: Path
    run_dir: Path
    status: RunStatus
    reason: str = ""
    steps: list[dict[str, Any]] = Field(default_factory=list)
    """id, status, reason, commands (each: id, command, exit_code, decision)."""
    gate: dict[str, Any] | None = None
    """{"passed": bool, "results": [{"id", "title", "status", "evidence"}]}."""
    summary: dict[str, Any] | None = None
    awaiting: dict[str, Any] | None = None
    """The command waiting for approval when the run paused on an ask."""
    shadow: bool = False
    cost: dict[str, Any] = Field(default_factory=dict)
    """model_calls and tokens, from the graph state."""
    memory: dict[str, Any] = Field(default_factory=dict)
    host_code: list[str] = Field(default_factory=list)
    """What the run left that runs on the person's machine (or why that could not be checked), one line each."""
    """What the memory cycle did after the run (lessons used, revised, written; rules fired)."""
    notices: list[str] = Field(default_factory=list)
    """What the person must be told about the run's end (a late hand-back, changes that could not be recorded)."""
    changes: dict[str, Any] | None = None
    """The run's changes (`added`, `modified`, `deleted`: shown names, folders end in `/`, the first 200 of
    each; `counts`): for a shadow run, what `tether apply` would bring over; for a plain run, what rollback undoes."""

    @property
    def journal_path(self) -> Path:
        return self.run_dir / "journal.jsonl"


class RunHooks(Approvals, Protocol):
    """Called by the runner around a run, and (as graphs.context.Approvals) at each guardian `ask`."""

    def before_run(self, run: RunInfo) -> MemoryContext:
        """Read memory for this goal (not called again on resume)."""
        ...

    def after_run(self, record: RunRecord, model: BaseChatModel) -> dict[str, Any]:
        """Revise and write memory with the run's own model once the run reached a final status (not on a pause).

        Returns fields to add to the run's report (e.g. lessons revised and written).
        """
        ...


class NoHooks(NoApprovals):
    """No memory, no learned trust: every ask goes to a person."""

    def before_run(self, run: RunInfo) -> MemoryContext:  # noqa: ARG002
        return MemoryContext()

    def after_run(self, record: RunRecord, model: BaseChatModel) -> dict[str, Any]:  # noqa: ARG002
        return {}

    def trust_kinds(self, verdict: Verdict) -> list[str]:
        from tether.runtime.trust.kinds import verdict_kinds

        return verdict_kinds(verdict)
