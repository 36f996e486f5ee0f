"""Helpers the node modules share: model calls, budgets, step transitions.

Parts: `call_model()` (names the call site in the metadata the scripted
model and tracing read), `first_call()`, `plan_steps()`, `over_budget()`,
`set_status()` (journals a step transition) and `fail_step()` (marks a step
failed and every transitive dependent blocked, by DFS). Each takes the run
context (graphs.context) it works with.
"""

from __future__ import annotations

import time
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from tether.common.budgets import RunBudgets
from tether.common.events import StepChanged
from tether.graphs.context import RunContext
from tether.graphs.dag import PlanStep, dependents
from tether.graphs.state import RunState, Step


def call_model(
    ctx: RunContext, messages: list[BaseMessage], tools: list[dict[str, Any]], site: str, key: str, turn: int
) -> tuple[AIMessage, int]:
    """Ask the model; the turn comes from checkpointed state so a resumed run asks the same question."""
    bound = ctx.model.bind_tools(tools)
    meta = {"tether_site": site, "tether_key": key, "tether_turn": turn}
    ai = bound.invoke(messages, config={"metadata": meta, "run_name": f"tether:{site}"})
    if not isinstance(ai, AIMessage):
        ai = AIMessage(content=str(getattr(ai, "content", ai)))
    usage = ai.usage_metadata or {}
    return ai, int(usage.get("total_tokens", 0))


def first_call(ai: AIMessage, name: str) -> dict[str, Any] | None:
    """Arguments of the first tool call named `name`, or None."""
    for call in ai.tool_calls:
        if call["name"] == name:
            return dict(call["args"])
    return None


def plan_steps(state: RunState) -> list[PlanStep]:
    return [PlanStep.model_validate(p) for p in state.get("plan", [])]


def over_budget(state: RunState, budgets: RunBudgets) -> str:
    """Why the run must stop executing (time or tokens), or ''."""
    elapsed = time.time() - state.get("started_at", time.time())
    if elapsed > budgets.max_seconds:
        return f"time budget exceeded ({elapsed:.0f}s > {budgets.max_seconds:.0f}s)"
    if state.get("tokens", 0) > budgets.max_tokens:
        return f"token budget exceeded ({state.get('tokens', 0)} > {budgets.max_tokens})"
    return ""


def set_status(ctx: RunContext, state: RunState, step: Step, status: str, reason: str = "", **extra: Any) -> Step:
    """A copy of `step` in its new status, journaled (idempotently per replan round)."""
    new: Step = {**step, "status": status, "reason": reason, **extra}  # type: ignore[typeddict-item]
    ctx.journal.append(StepChanged(
        key=f"step:{step['id']}:{status}:{state.get('replans', 0)}",
        step=step["id"], status=status, reason=reason,  # type: ignore[arg-type]
        summary=new.get("summary", ""), files_read=new.get("files_read", []),
        files_changed=new.get("files_changed", []), evidence=new.get("evidence", ""),
    ))
    return new


def fail_step(ctx: RunContext, state: RunState, step: Step, reason: str) -> dict[str, Step]:
    """The step failed: it and every transitive dependent (DFS) change status."""
    steps = state.get("steps", {})
    out = {step["id"]: set_status(ctx, state, step, "failed", reason)}
    for sid in dependents(plan_steps(state), step["id"]):
        if steps.get(sid, {}).get("status") in ("pending", "blocked"):
            out[sid] = set_status(ctx, state, steps[sid], "blocked", f"depends on failed step '{step['id']}'")
    return out
