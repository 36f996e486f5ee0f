"""Helpers the node modules share: model calls, budgets, step transitions.

Parts: `call_model()` (names the call site in the metadata the scripted
model and tracing read), `first_call()`, `plan_steps()`, `over_budget()`,
`set_status()` (journals a step transition) and `fail_step()` (marks a step
failed and every transitive dependent blocked, by DFS). Each takes the run
context (graphs.context) it works with.
"""

from __future__ import annotations

import json
import time
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from tether.common.budgets import RunBudgets
from tether.common.events import ModelAnswerRefused, StepChanged
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
    ai = screen_answer(ctx, ai, site, key, turn)
    return ai, int(usage.get("total_tokens", 0))


RAW_KEPT = 4000
"""Characters of a refused or malformed answer kept in the journal (head and tail)."""
MAX_ARG_DEPTH = 64
"""Deepest nesting of tool-call arguments accepted (a plan is a list of mappings: depth 4)."""


def _depth(value: Any) -> int:
    """Nesting depth of JSON-like data, without recursion (a 3,000-deep answer must not blow the stack)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > MAX_ARG_DEPTH:
            return depth
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list | tuple):
            stack.extend((v, depth + 1) for v in item)
    return deepest


def _clip(text: str) -> str:
    if len(text) <= RAW_KEPT:
        return text
    half = RAW_KEPT // 2
    return f"{text[:half]}\n[... {len(text) - RAW_KEPT} characters not kept ...]\n{text[-half:]}"


def screen_answer(ctx: RunContext, ai: AIMessage, site: str, key: str, turn: int) -> AIMessage:
    """The answer, or a short stand-in when it is over `max_answer_bytes` or nested too deep (journaled, bounded).

    Malformed tool calls (`invalid_tool_calls`, JSON the client could not
    read) are journaled with their raw text, so `tether show` shows what the
    model said instead of only "no plan submitted".
    """
    problem, text = "", ai.content if isinstance(ai.content, str) else ""
    try:
        text = text or json.dumps(ai.content, default=str)
        if any(_depth(c.get("args")) > MAX_ARG_DEPTH for c in ai.tool_calls):
            problem = f"its tool-call arguments are nested deeper than {MAX_ARG_DEPTH} levels"
        calls = "" if problem else json.dumps([{"name": c["name"], "args": c["args"]} for c in ai.tool_calls],
                                              default=str)
    except (ValueError, RecursionError) as e:  # unserialisable or too deep for the encoder
        problem, calls = f"its tool calls cannot be read ({type(e).__name__})", ""
    size = len(text.encode("utf-8", "replace")) + len(calls.encode("utf-8", "replace"))
    if not problem and size > ctx.max_answer_bytes:
        problem = f"it is {size:,} bytes, over model.max_answer_bytes ({ctx.max_answer_bytes:,})"
    if problem:
        ctx.journal.append(ModelAnswerRefused(key=f"answer:{site}:{key}:{turn}", site=site, step=key, turn=turn,
                                              problem=f"answer refused: {problem}", size=size,
                                              raw=_clip(text + ("\n" + calls if calls else ""))))
        return AIMessage(content=f"[Tether refused this answer: {problem}; answer again, shorter]",
                         usage_metadata=ai.usage_metadata, response_metadata={"tether_problem": problem})
    bad = list(getattr(ai, "invalid_tool_calls", None) or [])
    if bad:
        first = bad[0]
        problem = f"malformed call to {first.get('name') or 'a tool'}: {str(first.get('error') or 'unreadable')[:300]}"
        ctx.journal.append(ModelAnswerRefused(
            key=f"answer:{site}:{key}:{turn}", site=site, step=key, turn=turn, problem=problem, size=size,
            raw=_clip(text + "".join(f"\n{b.get('name')}: {b.get('args')}" for b in bad))))
        if not ai.tool_calls:
            return ai.model_copy(update={"response_metadata": {**ai.response_metadata, "tether_problem": problem}})
    return ai


def problem_of(ai: AIMessage) -> str:
    """Why `screen_answer` refused or flagged the answer ("" when it did not)."""
    return str((ai.response_metadata or {}).get("tether_problem") or "")


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
