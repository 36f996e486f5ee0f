"""The run graph: plan -> validate -> schedule -> act/guard/approve/execute -> replan -> summarize -> gate -> finish.

Parts: the routers (pure functions of the state and the run's budgets,
returning a Literal), the `gate` and `finish` nodes, `run_status()` and
`build_graph(checkpointer)`, which wires and compiles everything. The model,
sandbox, journal and gate come with each invocation as the run context
(graphs.context); nothing in the state refers to them, and the edges alone
decide which node runs next.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Checkpointer

from tether.common.events import GateRecorded, read_events
from tether.gate.judge import judge
from tether.graphs.context import RunContext
from tether.graphs.execution import act, approve, execute, guard, schedule, undecided
from tether.graphs.planning import plan, replan, summarize, validate
from tether.graphs.state import RunState


def after_validate(state: RunState, runtime: Runtime[RunContext]) -> Literal["schedule", "plan", "gate"]:
    if state.get("plan_valid"):
        return "schedule"
    return "plan" if state.get("plan_attempts", 0) < runtime.context.budgets.max_plan_attempts else "gate"


def after_schedule(state: RunState, runtime: Runtime[RunContext]) -> Literal["act", "replan", "summarize"]:
    if state.get("current"):
        return "act"
    failed = any(s["status"] == "failed" for s in state.get("steps", {}).values())
    if failed and not state.get("stop_reason") and state.get("replans", 0) < runtime.context.budgets.max_replans:
        return "replan"
    return "summarize"


def _settled(state: RunState) -> bool:
    return state["steps"][state["current"]]["status"] != "running"


def after_act(state: RunState) -> Literal["guard", "schedule"]:
    return "schedule" if _settled(state) else "guard"


def after_guard(state: RunState) -> Literal["approve", "execute"]:
    return "approve" if undecided(state) else "execute"


def after_approve(state: RunState) -> Literal["approve", "execute"]:
    return "approve" if undecided(state) else "execute"


def after_execute(state: RunState) -> Literal["act", "schedule"]:
    return "schedule" if _settled(state) else "act"


def gate(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Judge the run's evidence (journal, workspace diff, process list) against every requirement."""
    ctx = runtime.context
    if ctx.gate is None:
        msg = "the run context has no gate; the runner must hand one in"
        raise RuntimeError(msg)
    report = judge(dict(state), read_events(ctx.journal.path), ctx.gate)
    result = {"passed": report.passed, "results": [r.model_dump() for r in report.results],
              "review": report.review, "review_diff": report.review_diff, "checks": report.checks,
              "project": report.project, "proof": report.proof, "proof_detail": report.proof_detail,
              "self_verified": report.self_verified}
    ctx.journal.append(GateRecorded(key="gate", passed=report.passed, results=result["results"],
                                    review=report.review, checks=report.checks, proof=report.proof,
                                    proof_detail=report.proof_detail, project=report.project))
    return {"gate": result}


def run_status(state: RunState) -> tuple[str, str]:
    """success only when every step is done (or replaced), the gate passed and nothing needs review."""
    steps = state.get("steps", {}).values()
    verdict = state.get("gate") or {}
    if not state.get("plan_valid"):
        return "failed", state.get("plan_error", "no valid plan")
    if any(s["status"] == "blocked" for s in steps):
        return "blocked", "steps blocked by failed steps: " + ", ".join(
            s["id"] for s in steps if s["status"] == "blocked"
        )
    if any(
        s["status"] != "done" and not (s["status"] == "skipped" and "replaced by" in s.get("reason", "")) for s in steps
    ):
        failed = ", ".join(s["id"] for s in steps if s["status"] != "done")
        return "failed", state.get("stop_reason") or "steps failed: " + failed
    if not verdict.get("passed"):
        return "failed", "completion gate failed: " + ", ".join(
            r["id"] for r in verdict.get("results", []) if r["status"] == "fail")
    if verdict.get("review"):
        return "needs-review", "a person must review: " + "; ".join(verdict["review"][:3])
    if verdict.get("self_verified"):
        return "self-verified", ("the only proof is checks the run wrote itself; give your own with `--verify` "
                                 "(or set `[run] accept_self_verified`)")
    return "success", ""


def finish(state: RunState) -> dict[str, Any]:
    status, reason = run_status(state)
    return {"status": status, "stop_reason": reason}


def build_graph(checkpointer: Checkpointer = None) -> Any:
    """Compile the run graph with its checkpointer; invoke it with `context=RunContext(...)`."""
    graph = StateGraph(RunState, context_schema=RunContext)
    for node in (plan, validate, schedule, act, guard, approve, execute, replan, summarize, gate, finish):
        graph.add_node(node.__name__, node)
    graph.add_edge(START, "plan")
    graph.add_edge("plan", "validate")
    graph.add_conditional_edges("validate", after_validate)
    graph.add_conditional_edges("schedule", after_schedule)
    graph.add_conditional_edges("act", after_act)
    graph.add_conditional_edges("guard", after_guard)
    graph.add_conditional_edges("approve", after_approve)
    graph.add_conditional_edges("execute", after_execute)
    graph.add_edge("replan", "schedule")
    graph.add_edge("summarize", "gate")
    graph.add_edge("gate", "finish")
    graph.add_edge("finish", END)
    return graph.compile(checkpointer=checkpointer)
