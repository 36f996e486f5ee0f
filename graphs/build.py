"""The run graph: plan -> validate -> schedule -> act/guard/approve/execute -> replan -> summarize -> gate -> finish.

Parts: the routers (pure functions of the state returning a Literal), the
`gate` and `finish` nodes, and `build_graph(deps, checkpointer)` which wires
and compiles everything. The model, sandbox, journal and checkpointer are
injected here; nothing in the state refers to them.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.types import Checkpointer
from tether.common.events import GateRecorded
from tether.graphs.execution import execution_nodes, undecided
from tether.graphs.planning import planning_nodes
from tether.graphs.state import Deps, RunState


def make_routers(deps: Deps) -> dict[str, Any]:
    """Routers close over the (immutable) limits only."""

    def after_validate(state: RunState) -> Literal["schedule", "plan", "gate"]:
        if state.get("plan_valid"):
            return "schedule"
        return "plan" if state.get("plan_attempts", 0) < deps.max_plan_attempts else "gate"

    def after_schedule(state: RunState) -> Literal["act", "replan", "summarize"]:
        if state.get("current"):
            return "act"
        failed = any(s["status"] == "failed" for s in state.get("steps", {}).values())
        if failed and not state.get("stop_reason") and state.get("replans", 0) < deps.max_replans:
            return "replan"
        return "summarize"

    def after_act(state: RunState) -> Literal["guard", "schedule"]:
        return "guard" if state["steps"][state["current"]]["status"] == "running" else "schedule"

    def after_guard(state: RunState) -> Literal["approve", "act", "replan", "summarize"]:
        return "approve" if undecided(state) else after_schedule(state)

    def after_approve(state: RunState) -> Literal["approve", "execute"]:
        return "approve" if undecided(state) else "execute"

    def after_execute(state: RunState) -> Literal["act", "replan", "summarize"]:
        # execute schedules the next step itself once the current one is settled
        return after_schedule(state)

    return {"validate": after_validate, "schedule": after_schedule, "act": after_act, "guard": after_guard, "approve": after_approve, "execute": after_execute}


def run_status(state: RunState) -> tuple[str, str]:
    """success only when every step is done (or replaced), the gate passed and nothing needs review."""
    steps = state.get("steps", {}).values()
    gate = state.get("gate") or {}
    if not state.get("plan_valid"):
        return "failed", state.get("plan_error", "no valid plan")
    if any(s["status"] == "blocked" for s in steps):
        return "blocked", "steps blocked by failed steps: " + ", ".join(s["id"] for s in steps if s["status"] == "blocked")
    if any(s["status"] != "done" and not (s["status"] == "skipped" and "replaced by" in s.get("reason", "")) for s in steps):
        return "failed", state.get("stop_reason") or "steps failed: " + ", ".join(s["id"] for s in steps if s["status"] != "done")
    if not gate.get("passed"):
        return "failed", "completion gate failed: " + ", ".join(r["id"] for r in gate.get("results", []) if r["status"] == "fail")
    if gate.get("review"):
        return "needs-review", "a person must review: " + "; ".join(gate["review"][:3])
    return "success", ""


def build_graph(deps: Deps, checkpointer: Checkpointer = None) -> Any:
    """Compile the run graph with its dependencies and checkpointer."""
    nodes = {**planning_nodes(deps), **execution_nodes(deps)}

    def gate(state: RunState) -> dict[str, Any]:
        """Judge the run's evidence (journal, workspace diff, process list) against R01-R18."""
        report = deps.gate(state)
        deps.journal.append(GateRecorded(key="gate", passed=report["passed"], results=report["results"],
                                         review=report.get("review", []), checks=report.get("checks", [])))
        return {"gate": report}

    def finish(state: RunState) -> dict[str, Any]:
        status, reason = run_status(state)
        return {"status": status, "stop_reason": reason}

    graph = StateGraph(RunState)
    for name, fn in nodes.items():
        graph.add_node(name, fn)
    graph.add_node("gate", gate)
    graph.add_node("finish", finish)
    routers = make_routers(deps)
    graph.add_edge(START, "plan")
    graph.add_edge("plan", "validate")
    graph.add_conditional_edges("validate", routers["validate"])
    graph.add_conditional_edges("schedule", routers["schedule"])
    graph.add_conditional_edges("act", routers["act"])
    graph.add_conditional_edges("guard", routers["guard"])
    graph.add_conditional_edges("approve", routers["approve"])
    graph.add_conditional_edges("execute", routers["execute"])
    graph.add_edge("replan", "schedule")
    graph.add_edge("summarize", "gate")
    graph.add_edge("gate", "finish")
    graph.add_edge("finish", END)
    return graph.compile(checkpointer=checkpointer)
