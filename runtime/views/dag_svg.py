"""The plan as an SVG picture: one box per step, coloured by status, with its dependency edges.

Layout by networkx (already a dependency; no system binary such as graphviz
needed, so a report can be written wherever a run can): a layered drawing,
`topological_generations` gives each step its column, and steps within a
column are ordered by the mean row of their dependencies (fewer crossings).
The SVG is then written from those positions. Cascades are drawn: a red
dashed edge from a failed step to each step it blocked, a grey dashed edge
from a replaced step to its repair.
"""

from __future__ import annotations

import networkx as nx

from tether.runtime.views.run_view import StepView
from tether.runtime.views.text import html_text

FILL = {"done": "#2e7d32", "running": "#0277bd", "pending": "#9e9e9e", "failed": "#c62828",
        "blocked": "#ef6c00", "skipped": "#6a1b9a"}
BOX_W, BOX_H, COL_GAP, ROW_GAP, PAD = 170, 46, 70, 26, 20
LABEL = 20
"""Characters of a step id drawn in its box (the full id is in the box's tooltip)."""


def _columns(steps: list[StepView]) -> list[list[str]]:
    g = nx.DiGraph()
    g.add_nodes_from(s.id for s in steps)
    g.add_edges_from((d, s.id) for s in steps for d in s.depends_on if d in g)
    try:
        generations = [list(gen) for gen in nx.topological_generations(g)]
    except nx.NetworkXUnfeasible:  # a damaged journal can describe a cycle: draw one column
        generations = [[s.id for s in steps]]
    order = {s.id: i for i, s in enumerate(steps)}
    row: dict[str, float] = {}
    for gen in generations:  # barycenter ordering, column by column
        def key(sid: str) -> tuple[float, int]:
            preds = [row[p] for p in g.predecessors(sid) if p in row]
            return (sum(preds) / len(preds) if preds else order[sid], order[sid])

        gen.sort(key=key)
        for i, sid in enumerate(gen):
            row[sid] = i
    return generations


def positions(steps: list[StepView]) -> dict[str, tuple[float, float]]:
    """Top-left corner of each step's box, in SVG pixels: column = generation, row = order in it."""
    return {sid: (PAD + col * (BOX_W + COL_GAP), PAD + row * (BOX_H + ROW_GAP))
            for col, gen in enumerate(_columns(steps)) for row, sid in enumerate(gen)}


def _edge(a: tuple[float, float], b: tuple[float, float], cls: str, title: str) -> str:
    x1, y1 = a[0] + BOX_W, a[1] + BOX_H / 2
    x2, y2 = b[0], b[1] + BOX_H / 2
    if x2 <= x1:  # same column (a repair drawn beside its replaced step): arc around
        x1, x2 = a[0] + BOX_W / 2, b[0] + BOX_W / 2
        y1, y2 = a[1] + (BOX_H if b[1] > a[1] else 0), b[1] + (0 if b[1] > a[1] else BOX_H)
        path = f"M{x1:.0f},{y1:.0f} C{x1 + 60:.0f},{y1:.0f} {x2 + 60:.0f},{y2:.0f} {x2:.0f},{y2:.0f}"
    else:
        mx = (x1 + x2) / 2
        path = f"M{x1:.0f},{y1:.0f} C{mx:.0f},{y1:.0f} {mx:.0f},{y2:.0f} {x2:.0f},{y2:.0f}"
    return f'<path class="edge {cls}" d="{path}" marker-end="url(#arrow-{cls})"><title>{title}</title></path>'


def dag_svg(steps: list[StepView]) -> str:
    """The SVG element; every step id and reason is escaped, none is put in an attribute."""
    pos = positions(steps)
    if not pos:
        return '<p class="empty">No plan was accepted.</p>'
    width = max(x for x, _ in pos.values()) + BOX_W + PAD + 60
    height = max(y for _, y in pos.values()) + BOX_H + PAD
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="dag" width="{width:.0f}" height="{height:.0f}" '
             f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="plan">',
             "<defs>" + "".join(
                 f'<marker id="arrow-{c}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
                 f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="head {c}"/></marker>'
                 for c in ("dep", "cascade", "repair")) + "</defs>"]
    for s in steps:
        for d in s.depends_on:
            if d in pos:
                parts.append(_edge(pos[d], pos[s.id], "dep", f"{html_text(s.id)} depends on {html_text(d)}"))
        for d in s.blocked_via:
            if d in pos:
                parts.append(
                    _edge(
                        pos[d],
                        pos[s.id],
                        "cascade",
                        f"{html_text(s.id)} was blocked by {html_text(d)} (cascade from failed step "
                        f"{html_text(s.blocked_by)})",
                    )
                )
        if s.replaced_by in pos:
            parts.append(
                _edge(
                    pos[s.id],
                    pos[s.replaced_by],
                    "repair",
                    f"{html_text(s.id)} replaced by repair step {html_text(s.replaced_by)}",
                )
            )
    for i, s in enumerate(steps):
        x, y = pos[s.id]
        fill = FILL.get(s.status, "#455a64")
        label = s.id if len(s.id) <= LABEL else s.id[: LABEL - 1] + "…"
        ring = " was-blocked" if s.blocked_by else ""
        tip = (
            f"{s.id}: {s.status}"
            + (f" — {s.reason}" if s.reason else "")
            + (f" (history: {' → '.join(s.history)})" if s.history else "")
        )
        parts.append(
            f'<g class="node{ring}" id="step-{i}"><title>{html_text(tip)}</title>'
            f'<rect x="{x:.0f}" y="{y:.0f}" width="{BOX_W}" height="{BOX_H}" rx="7" fill="{fill}"/>'
            f'<text x="{x + BOX_W / 2:.0f}" y="{y + 19:.0f}" class="id">{html_text(label)}</text>'
            f'<text x="{x + BOX_W / 2:.0f}" y="{y + 36:.0f}" class="st">{html_text(s.status)}'
            + (" · was blocked" if s.blocked_by and s.status != "blocked" else "")
            + "</text></g>")
    parts.append("</svg>")
    return "".join(parts)
