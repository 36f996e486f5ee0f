"""Planner, plan validation, replanner and summarizer nodes.

Parts: the node functions `plan`, `validate`, `replan`, `summarize` (each a
function of the state and LangGraph's runtime, whose context is the run's
`RunContext`); routers live in graphs.build. The model calls and the
checks are separate nodes so a rejected plan is journaled once and the
planner, asked again, sees the error.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from tether.common.events import PlanAccepted, PlanRejected, Replanned, SummaryWritten
from tether.graphs.common import call_model, first_call, plan_steps, problem_of, set_status
from tether.graphs.context import RunContext
from tether.graphs.dag import PlanError, PlanStep, parse_steps, still_blocked, validate_plan
from tether.graphs.prompts import (
    PLAN_TOOLS,
    REPAIR_TOOLS,
    SUMMARY_TOOLS,
    planner_messages,
    replanner_messages,
    summarizer_messages,
)
from tether.graphs.state import RunState, Step


def plan(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Ask the planner (turn = attempt number) for a plan."""
    ctx = runtime.context
    attempt = state.get("plan_attempts", 0)
    messages = planner_messages(
        state["goal"], state.get("memory_context", ""), state.get("plan_error", ""), ctx.workspace_mount
    )
    ai, tokens = call_model(ctx, messages, PLAN_TOOLS, "planner", "", attempt)
    args = first_call(ai, "submit_plan")
    return {"draft": None if args is None else args.get("steps"), "draft_problem": problem_of(ai), "tokens": tokens}

def validate(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Accept the draft as the DAG, or journal why not for the planner's next attempt."""
    ctx = runtime.context
    attempt = state.get("plan_attempts", 0)
    draft = state.get("draft")
    try:
        if draft is None:
            problem = state.get("draft_problem") or ""
            msg = "no plan submitted; call submit_plan with steps" + (
                f" (the answer was not usable: {problem}; `tether show` has what it said)" if problem else "")
            raise PlanError(msg)
        steps = parse_steps(draft)
        validate_plan(steps, ctx.budgets.max_steps)
    except PlanError as e:
        ctx.journal.append(PlanRejected(key=f"plan:{attempt}", attempt=attempt, error=str(e), steps=draft))
        return {"plan_attempts": attempt + 1, "plan_error": str(e), "plan_valid": False}
    plan = [s.model_dump() for s in steps]
    ctx.journal.append(PlanAccepted(key=f"plan:{attempt}", attempt=attempt, steps=plan))
    fresh: dict[str, Step] = {
        s.id: {"id": s.id, "status": "pending", "reason": "", "turns": 0, "commands": []} for s in steps
    }
    return {"plan": plan, "plan_attempts": attempt + 1, "plan_error": "", "plan_valid": True, "steps": fresh}

def replan(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Ask the replanner for repair steps and re-attach blocked dependents to them."""
    ctx = runtime.context
    rnd = state.get("replans", 0)
    steps = state.get("steps", {})
    messages = replanner_messages(
        state["goal"], state.get("plan", []), steps, state.get("repair_error", ""), ctx.workspace_mount
    )
    ai, tokens = call_model(ctx, messages, REPAIR_TOOLS, "replanner", "", rnd)
    args = first_call(ai, "submit_repair") or {}
    replace = {str(k): str(v) for k, v in (args.get("replace") or {}).items()}
    try:
        if not args.get("steps"):
            msg = "no repair steps submitted"
            raise PlanError(msg)
        new = parse_steps(args["steps"])
        plan = _rewire(plan_steps(state), new, replace, steps)
        validate_plan(plan, ctx.budgets.max_steps)
    except PlanError as e:
        ctx.journal.append(Replanned(key=f"replan:{rnd}", round=rnd, accepted=False, error=str(e), replace=replace))
        return {"replans": rnd + 1, "repair_error": str(e), "tokens": tokens}
    ctx.journal.append(
        Replanned(key=f"replan:{rnd}", round=rnd, accepted=True, steps=[s.model_dump() for s in new], replace=replace)
    )
    after = {**state, "replans": rnd + 1}
    updates: dict[str, Step] = {}
    for failed, repair in replace.items():
        why = f"failed ({steps[failed].get('reason', '')}); replaced by repair step '{repair}'"
        updates[failed] = set_status(ctx, after, steps[failed], "skipped", why)
    for s in new:
        updates[s.id] = {"id": s.id, "status": "pending", "reason": "", "turns": 0, "commands": []}
    status = {sid: updates.get(sid, st)["status"] for sid, st in {**steps, **updates}.items()}
    blocked = still_blocked(plan, status)
    for sid, st in steps.items():
        if st.get("status") == "blocked" and sid not in blocked:
            updates[sid] = set_status(ctx, after, st, "pending", "")
    return {
        "plan": [s.model_dump() for s in plan],
        "steps": updates,
        "replans": rnd + 1,
        "repair_error": "",
        "tokens": tokens,
    }


def summarize(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Ask for the final summary with its citations and claims."""
    ctx = runtime.context
    messages = summarizer_messages(
        state["goal"], state.get("steps", {}), ctx.workspace_mount, state.get("memory_context", "")
    )
    ai, tokens = call_model(ctx, messages, SUMMARY_TOOLS, "summarizer", "", 0)
    args = first_call(ai, "submit_summary") or {"text": str(ai.content)}
    summary = {
        "text": str(args.get("text", "")),
        "files": [str(f) for f in args.get("files") or []],
        "commands": [str(c) for c in args.get("commands") or []],
        "claims": [c for c in args.get("claims") or [] if isinstance(c, dict)],
        "lessons_used": [str(i) for i in args.get("lessons_used") or []],
    }
    ctx.journal.append(SummaryWritten(key="summary", **summary))
    return {"summary": summary, "tokens": tokens}


def _rewire(
    plan: list[PlanStep], new: list[PlanStep], replace: dict[str, str], steps: dict[str, Step]
) -> list[PlanStep]:
    """The plan with repair steps added and edges to each replaced step moved to its repair."""
    known = {s.id for s in plan}
    clash = [s.id for s in new if s.id in known]
    if clash:
        msg = f"repair step ids already used: {', '.join(clash)}"
        raise PlanError(msg)
    new_ids = {s.id for s in new}
    for failed, repair in replace.items():
        if steps.get(failed, {}).get("status") != "failed":
            msg = f"replace: '{failed}' is not a failed step"
            raise PlanError(msg)
        if repair not in new_ids:
            msg = f"replace: '{repair}' is not one of the repair steps"
            raise PlanError(msg)
    moved = [
        s.model_copy(update={"depends_on": [replace.get(d, d) for d in s.depends_on]})
        for s in plan
    ]
    return moved + new
