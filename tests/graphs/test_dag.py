"""The networkx DAG: what a plan must satisfy, what is ready, what a failure blocks."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from tether.graphs.dag import (
    PlanError,
    PlanStep,
    dependents,
    parse_steps,
    ready,
    still_blocked,
    to_graph,
    validate_plan,
)


def steps(*specs: tuple[str, list[str]]) -> list[PlanStep]:
    return [PlanStep(id=i, depends_on=d) for i, d in specs]


@pytest.mark.parametrize(("plan", "error"), [
    (steps(("a", ["b"]), ("b", ["a"])), "cycle: "),
    (steps(("a", []), ("b", ["ghost"])), "unknown step(s): ghost"),
    (steps(("a", ["a"])), "depends on itself"),
    (steps(("a", []), ("a", [])), "duplicate step ids: a"),
    ([], "no steps"),
])
def test_invalid_plans_are_rejected_with_the_reason(plan, error):
    with pytest.raises(PlanError, match=error.replace("(", r"\(").replace(")", r"\)")):
        validate_plan(plan)


def test_plan_over_the_step_budget_is_rejected():
    with pytest.raises(PlanError, match="budget of 2"):
        validate_plan(steps(("a", []), ("b", []), ("c", [])), max_steps=2)


def test_malformed_payload_names_the_problem():
    with pytest.raises(PlanError, match="non-empty list"):
        parse_steps({"id": "a"})
    with pytest.raises(PlanError, match="malformed step"):
        parse_steps([{"description": "no id"}])


def test_ready_set_follows_dependencies_in_plan_order():
    plan = steps(("b", []), ("a", []), ("c", ["a", "b"]))
    assert ready(plan, {"a": "pending", "b": "pending", "c": "pending"}) == ["b", "a"]
    assert ready(plan, {"a": "done", "b": "running", "c": "pending"}) == []
    assert ready(plan, {"a": "done", "b": "done", "c": "pending"}) == ["c"]


def test_ready_matches_the_networkx_lexicographical_sort():
    rng = random.Random(7)
    for _ in range(300):
        ids = [f"s{i}" for i in range(rng.randint(1, 12))]
        rng.shuffle(ids)
        pool = [*ids, "ghost", "other"]
        plan = [PlanStep(id=i, depends_on=rng.sample(pool, rng.randint(0, 3))) for i in ids]
        status = {i: rng.choice(["pending", "done", "running", "failed"]) for i in pool}
        index = {s.id: n for n, s in enumerate(plan)}
        graph = to_graph(plan)
        try:
            order = list(nx.lexicographical_topological_sort(graph, key=lambda n: index.get(n, len(index))))
        except nx.NetworkXUnfeasible:
            with pytest.raises(nx.NetworkXUnfeasible):
                ready(plan, status)
            continue
        expected = [
            n
            for n in order
            if status.get(n) == "pending" and all(status.get(d) == "done" for d in graph.predecessors(n))
        ]
        assert ready(plan, status) == expected


def test_failure_cascades_to_every_transitive_dependent():
    plan = steps(("a", []), ("b", ["a"]), ("c", ["b"]), ("d", ["c", "x"]), ("x", []), ("y", ["x"]))
    assert set(dependents(plan, "a")) == {"b", "c", "d"}
    assert dependents(plan, "y") == []
    status = {"a": "failed", "b": "blocked", "c": "blocked", "d": "blocked", "x": "done", "y": "done"}
    assert still_blocked(plan, status) == {"b", "c", "d"}
