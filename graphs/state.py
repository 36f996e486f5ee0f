"""Typed state of one run, and the reducers that merge node updates.

Parts: `Step` (one step's progress), `Call` (one tool call of the current
actor turn, with its verdict, approval and result), `RunState` (the graph's
state), reducers `merge` and `add`, and `Deps` (what the graph is compiled
with: model, sandbox, journal, guardian, gate, hooks, approval mode).

Everything in the state is plain JSON-like data or LangChain messages, so
the SQLite checkpointer can save it after every node.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Protocol, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from tether.common.journal import Journal
from tether.guardian.verdict import CheckContext, Verdict
from tether.sandbox.base import Sandbox

ApprovalMode = Literal["prompt", "yes", "refuse"]
"""prompt: pause with interrupt() for a person; yes: approve asks; refuse: nobody is there."""


def merge(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Shallow dict merge: a node returns only the keys it changed."""
    return {**(left or {}), **(right or {})}


class Step(TypedDict, total=False):
    id: str
    status: Literal["pending", "running", "done", "failed", "blocked", "skipped"]
    reason: str
    turns: int
    """Actor turns taken in this step (the scripted model's `tether_turn`)."""
    commands: list[str]
    summary: str
    files_read: list[str]
    files_changed: list[str]
    evidence: str


class Call(TypedDict, total=False):
    call_id: str
    cmd_id: str
    """Stable `step/turn/index`: the journal key that makes execution idempotent."""
    name: str
    args: dict[str, Any]
    command: str
    decision: Literal["allow", "ask", "deny"]
    enforced: Literal["allow", "ask", "deny"]
    reason: str
    verdict: dict[str, Any]
    approval: Literal["none", "approved", "refused"]
    error: str
    """Set when the call itself is malformed; shown to the model instead of running it."""


class RunState(TypedDict, total=False):
    run_id: str
    goal: str
    memory_context: str
    """Lessons and rules from memory, put into planner and actor prompts."""
    shadow: bool
    """Shadow audit: verdicts are recorded, not enforced (the sandbox still isolates)."""
    started_at: float
    draft: Any
    """The planner's last answer, before validation."""
    plan: list[dict[str, Any]]
    plan_attempts: int
    plan_error: str
    plan_valid: bool
    steps: Annotated[dict[str, Step], merge]
    current: str
    messages: list[BaseMessage]
    """The current step's conversation with the actor (steps run one at a time; the journal keeps the rest)."""
    pending: list[Call]
    replans: int
    repair_error: str
    tokens: Annotated[int, operator.add]
    summary: dict[str, Any]
    gate: dict[str, Any]
    status: str
    stop_reason: str


class GuardFn(Protocol):
    def __call__(self, command: str, context: CheckContext) -> Verdict: ...


@dataclass
class Deps:
    """What the graph is compiled with; none of it is saved in checkpoints."""

    model: BaseChatModel
    sandbox: Sandbox
    journal: Journal
    guard: GuardFn
    gate: Callable[[RunState], dict[str, Any]]
    """Builds the evidence (journal, diff, process list) and returns a GateReport dump."""
    max_steps: int = 20
    max_commands_per_step: int = 12
    max_plan_attempts: int = 3
    max_replans: int = 2
    max_seconds: float = 1800.0
    max_tokens: int = 500_000
    approval: ApprovalMode = "refuse"
    decide_ask: Callable[[Verdict], Literal["allow", "ask"]] = field(default=lambda v: "ask")
    record_approval: Callable[[Verdict, bool], None] = field(default=lambda v, a: None)
    shadow_record: Callable[[Verdict, str, bool | None], None] = field(default=lambda v, c, p: None)
    """Shadow mode: (verdict, command, the person's answer or None) for the audit."""
    workspace_mount: str = "/home/tether/workspace"
    output_cap: int = 4000
    """Characters of command output shown to the model (head and tail)."""
    snapshot: Callable[[], Any] | None = None
    """Returns a workspace manifest; diffs of two snapshots name a command's changes."""
    changed: Callable[[Any, Any], list[str]] | None = None
    stray: Callable[[Any], list[str]] | None = None
    """Given the manifest before a command: changes since the previous command ended that no command made."""
    over_limit: Callable[[Any], str | None] | None = None
    """Given the snapshot after a command: why the workspace is now too big, or None; the command then fails with that message."""
