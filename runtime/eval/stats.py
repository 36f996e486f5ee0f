"""Gain, Regression and the noise band, computed from the per-task table alone (WikiTrace's definitions).

Parts: `wilson` (95 % Wilson score interval), `reference` (the no-memory
majority of a task), `gain_regression` (one method against the reference),
`summarize` (every method, the noise band, success rates and cost) and
`verdict` (one plain sentence: did memory help beyond the noise band?).

Definitions, over the tasks that were measured (not skipped, every
reference trial ran):
- a task is *solved without memory* when most of its `no-memory` trials
  passed (2 of 3);
- Gain of a method = its passing trials on the unsolved tasks / all its
  trials on them;
- Regression = its failing trials on the solved tasks / all its trials on them;
- the noise band is the Gain and Regression of `rerun` (three more no-memory
  trials) against the same reference.
Trials of one task are pooled as if independent; the interval is therefore
narrower than a per-task bootstrap would give when trials of a task agree.
"""

from __future__ import annotations

import math
from typing import Any

Z95 = 1.959964
COMPARED = ("memory", "lessons-only", "rerun")


def wilson(k: int, n: int, z: float = Z95) -> list[float] | None:
    """Wilson score interval of k successes in n trials; None when n is 0."""
    if n == 0:
        return None
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return [round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)]


def reference(row: dict[str, Any], reference_trials: int) -> bool | None:
    """The no-memory majority of a task row; None when the task was not fully measured."""
    trials = [t["passed"] for t in row["methods"].get("no-memory", [])]
    if row.get("skipped") or len(trials) < reference_trials or any(p is None for p in trials):
        return None
    return sum(trials) * 2 > len(trials)


def _rate(k: int, n: int) -> dict[str, Any]:
    return {"value": round(k / n, 4) if n else None, "k": k, "n": n, "ci95": wilson(k, n)}


def gain_regression(rows: list[dict[str, Any]], method: str, reference_trials: int) -> dict[str, Any]:
    """Gain and Regression of `method`'s trials against each task's no-memory majority."""
    gain_k = gain_n = reg_k = reg_n = 0
    for row in rows:
        solved = reference(row, reference_trials)
        if solved is None:
            continue
        for t in row["methods"].get(method, []):
            if t["passed"] is None:
                continue
            if solved:
                reg_n += 1
                reg_k += not t["passed"]
            else:
                gain_n += 1
                gain_k += bool(t["passed"])
    return {"gain": _rate(gain_k, gain_n), "regression": _rate(reg_k, reg_n)}


def _cost(rows: list[dict[str, Any]], method: str) -> dict[str, Any]:
    cells = [t for row in rows for t in row["methods"].get(method, []) if t["status"] == "done"]
    if not cells:
        return {"cells": 0}
    n = len(cells)
    return {
        "cells": n,
        "model_calls": round(sum(t["model_calls"] + t["memory_calls"] for t in cells) / n, 2),
        "tokens": round(sum(t["tokens"] + t["memory_tokens"] for t in cells) / n, 1),
        "memory_calls": round(sum(t["memory_calls"] for t in cells) / n, 2),
        "memory_tokens": round(sum(t["memory_tokens"] for t in cells) / n, 1),
        "wall_s": round(sum(t["wall_s"] for t in cells) / n, 2),
    }


def summarize(rows: list[dict[str, Any]], reference_trials: int = 3) -> dict[str, Any]:
    """Per method: success rate, Gain, Regression (with 95 % Wilson intervals) and cost per task."""
    measured = [r for r in rows if reference(r, reference_trials) is not None]
    out: dict[str, Any] = {
        "interval": "wilson-95",
        "tasks_measured": len(measured),
        "tasks_solved_without_memory": sum(bool(reference(r, reference_trials)) for r in measured),
        "methods": {},
    }
    for method in ("no-memory", *COMPARED):
        trials = [t for r in measured for t in r["methods"].get(method, []) if t["passed"] is not None]
        entry: dict[str, Any] = {"success_rate": _rate(sum(t["passed"] for t in trials), len(trials)),
                                 "cost_per_task": _cost(rows, method)}
        if method != "no-memory":
            entry |= gain_regression(rows, method, reference_trials)
        out["methods"][method] = entry
    rerun = out["methods"]["rerun"]
    out["noise_band"] = {"gain": rerun["gain"]["value"], "regression": rerun["regression"]["value"]}
    mem, lessons = out["methods"]["memory"]["cost_per_task"], out["methods"]["lessons-only"]["cost_per_task"]
    if mem.get("tokens") and lessons.get("tokens"):
        out["memory_vs_lessons_only_tokens"] = round(mem["tokens"] / lessons["tokens"], 3)
    return out


def verdict(summary: dict[str, Any]) -> str:
    """One sentence a person can act on: did memory help, beyond the noise of rerunning without it?

    Memory helped when its Gain is above the noise band's Gain and its
    Regression is not above the band's; it hurt when its Regression is above
    the band's and its Gain is not above; anything else is within the noise.
    """
    n = summary["tasks_measured"]
    if not n:
        return "No task was measured (no complete no-memory reference), so this eval cannot say whether memory helped."
    mem, band = summary["methods"]["memory"], summary["noise_band"]
    gain, reg = mem["gain"]["value"], mem["regression"]["value"]
    noise_gain, noise_reg = band["gain"] or 0.0, band["regression"] or 0.0
    pct = lambda v: "n/a" if v is None else f"{v:.0%}"  # noqa: E731
    figures = (f"Gain {pct(gain)} against a noise band of {pct(noise_gain)}, Regression {pct(reg)} against "
               f"{pct(noise_reg)}, over {n} measured task(s)")
    few = "; with so few tasks the intervals are wide, so measure more before trusting it" if n < 10 else ""
    more_gain = gain is not None and gain > noise_gain
    more_reg = reg is not None and reg > noise_reg
    if more_gain and not more_reg:
        return f"Memory helped beyond the noise band: {figures}{few}."
    if more_reg and not more_gain:
        return f"Memory hurt beyond the noise band: {figures}{few}."
    if more_gain and more_reg:
        return f"Memory both helped and hurt beyond the noise band: {figures}{few}."
    return f"Memory did not help beyond the noise band: {figures}{few}."
