"""The task DAG in networkx: plan steps, validation, ready set, failure cascade.

Parts: `PlanStep` (one step as the planner writes it), `PlanError`,
`validate_plan()` (duplicate ids, unknown dependencies, self-loops, cycles,
size), `to_graph()`, `ready()` (steps whose dependencies are all done, in
topological order), `dependents()` (every transitive dependent, by DFS) and
`still_blocked()` (which blocked steps a repair has freed).

Edges point from a dependency to the step that needs it, so the descendants
of a step are exactly the steps its failure blocks.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping

import networkx as nx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tether.common.errors import TetherError

StepStatus = str
"""One of pending, running, done, failed, blocked, skipped (see graphs.state)."""


class PlanError(TetherError, ValueError):
    """A plan the DAG cannot accept; the message goes back to the planner."""


class PlanStep(BaseModel):
    """One step of a plan, as the planner submits it."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1, max_length=64)
    """Short unique id, e.g. `write-module`."""
    description: str = ""
    """What the step must achieve."""
    depends_on: list[str] = Field(default_factory=list)
    """Ids of steps that must be done first."""
    verify: str = ""
    """How the step's result is checked (a command, ideally)."""


def parse_steps(raw: object) -> list[PlanStep]:
    """Turn the tool-call payload into steps; PlanError says what is malformed."""
    if not isinstance(raw, list) or not raw:
        msg = "the plan must be a non-empty list of steps {id, description, depends_on, verify}"
        raise PlanError(msg)
    try:
        return [PlanStep.model_validate(item) for item in raw]
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        msg = f"malformed step ({where}: {first['msg']}); each step needs an id and a depends_on list"
        raise PlanError(msg) from e


def to_graph(steps: Iterable[PlanStep]) -> nx.DiGraph:
    """Dependency edges dep -> step; unknown dependencies become dangling nodes."""
    graph = nx.DiGraph()
    for step in steps:
        graph.add_node(step.id)
        for dep in step.depends_on:
            graph.add_edge(dep, step.id)
    return graph


def validate_plan(steps: list[PlanStep], max_steps: int | None = None) -> nx.DiGraph:
    """Return the DAG, or raise PlanError with every problem found.

    Checked: size, duplicate ids, self-loops, unknown dependencies, cycles
    (a topological sort must exist).
    """
    problems: list[str] = []
    if not steps:
        problems.append("the plan has no steps")
    if max_steps is not None and len(steps) > max_steps:
        problems.append(f"the plan has {len(steps)} steps, more than the budget of {max_steps}")
    ids = [s.id for s in steps]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        problems.append(f"duplicate step ids: {', '.join(dupes)}")
    known = set(ids)
    for step in steps:
        if step.id in step.depends_on:
            problems.append(f"step '{step.id}' depends on itself")
        unknown = [d for d in step.depends_on if d not in known]
        if unknown:
            problems.append(f"step '{step.id}' depends on unknown step(s): {', '.join(unknown)}")
    graph = to_graph(steps)
    if not problems:
        try:
            list(nx.topological_sort(graph))
        except nx.NetworkXUnfeasible:
            cycle = nx.find_cycle(graph)
            path = " -> ".join([cycle[0][0], *(v for _, v in cycle)])
            problems.append(f"the plan has a cycle: {path}")
    if problems:
        raise PlanError("; ".join(problems))
    return graph


def ready(steps: list[PlanStep], status: Mapping[str, StepStatus]) -> list[str]:
    """Pending steps whose dependencies are all done, in a stable topological order.

    The order of `nx.lexicographical_topological_sort(to_graph(steps))` keyed
    by plan position (unknown ids last, ties in first-seen order), computed
    without building the networkx graph: the scheduler asks once per step.
    A cycle raises `nx.NetworkXUnfeasible`, as the sort does.
    """
    seen: dict[str, int] = {}
    succ: dict[str, dict[str, None]] = {}
    pred: dict[str, dict[str, None]] = {}
    for step in steps:
        for node in (step.id, *step.depends_on):
            if node not in seen:
                seen[node] = len(seen)
                succ[node], pred[node] = {}, {}
        for dep in step.depends_on:
            succ[dep][step.id] = None
            pred[step.id][dep] = None
    index = {s.id: i for i, s in enumerate(steps)}
    indegree = {n: len(p) for n, p in pred.items() if p}
    heap = [(index.get(n, len(index)), i, n) for n, i in seen.items() if n not in indegree]
    heapq.heapify(heap)
    out: list[str] = []
    while heap:
        node = heapq.heappop(heap)[2]
        if status.get(node) == "pending" and all(status.get(d) == "done" for d in pred[node]):
            out.append(node)
        for child in succ[node]:
            indegree[child] -= 1
            if not indegree[child]:
                del indegree[child]
                heapq.heappush(heap, (index.get(child, len(index)), seen[child], child))
    if indegree:
        msg = "Graph contains a cycle or graph changed during iteration"
        raise nx.NetworkXUnfeasible(msg)
    return out


def dependents(steps: list[PlanStep], failed: str) -> list[str]:
    """Every step that depends on `failed`, directly or transitively (DFS preorder)."""
    graph = to_graph(steps)
    if failed not in graph:
        return []
    return [n for n in nx.dfs_preorder_nodes(graph, failed) if n != failed]


def still_blocked(steps: list[PlanStep], status: Mapping[str, StepStatus]) -> set[str]:
    """Steps that have a failed or blocking ancestor under the current edges."""
    graph = to_graph(steps)
    out: set[str] = set()
    for sid, st in status.items():
        if st == "failed" and sid in graph:
            out.update(nx.descendants(graph, sid))
    return out
