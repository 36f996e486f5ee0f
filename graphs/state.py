"""Typed state of one run, and the reducers that merge node updates.

Parts: `Step` (one step's progress), `Call` (one tool call of the current
actor turn, with its verdict, approval and result), `RunState` (the graph's
state) and the reducer `merge`. What the graph runs with (model, sandbox,
journal, ...) is not state: it is the run context (graphs.context).

Everything in the state is plain JSON-like data or LangChain messages, so
the SQLite checkpointer can save it after every node.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, TypedDict

from langchain_core.messages import BaseMessage


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
    approved_by: str
    """Who answered an ask: person, yes-flag, trust or no-person."""
    error: str
    """Set when the call itself is malformed; shown to the model instead of running it."""
    network: list[str]
    """Hosts (`host:port`) the egress proxy opens for this command when it runs; absent: no way out."""


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
    draft_problem: str
    """Why that answer held no usable plan (refused, or a malformed tool call), for the planner's next prompt."""
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
