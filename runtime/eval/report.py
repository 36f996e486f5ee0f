"""The eval report as markdown: the per-task table, then Gain, Regression and cost per method.

Parts: `render_markdown(report)`. Task names and reasons come from the task
folder and the sandbox: table cells are made single-line and `|`-free.
"""

from __future__ import annotations

from typing import Any

from tether.runtime.eval.stats import verdict
from tether.runtime.terminal import plain

METHODS = ("no-memory", "rerun", "memory", "lessons-only")


def _cell(text: object) -> str:
    return plain(str(text)).replace("\n", " ").replace("|", "\\|")


def _marks(trials: list[dict[str, Any]]) -> str:
    return " ".join("✓" if t["passed"] else "–" if t["passed"] is None else "✗" for t in trials) or ""


def _pct(rate: dict[str, Any]) -> str:
    if rate["value"] is None:
        return "n/a (no tasks)"
    lo, hi = rate["ci95"]
    return f"{rate['value']:.1%} [{lo:.1%}, {hi:.1%}] ({rate['k']}/{rate['n']})"


def render_markdown(report: dict[str, Any]) -> str:
    """eval.md: what a person reads (eval.json holds the same and more)."""
    s = report["summary"]
    lines = [
        "# tether eval", "",
        f"Tasks: `{_cell(report['tasks'])}` · model `{_cell(report['model'])}` · {_cell(report['mode'])}", "",
        "| task | reference (no-memory) | majority | rerun | memory | lessons-only | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in report["table"]:
        m = row["methods"]
        majority = {True: "solved", False: "unsolved", None: "–"}[row["reference"]["majority"]]
        note = f"skipped: {row['skipped']}" if row["skipped"] else ""
        lines.append(
            f"| {_cell(row['task'])} | {_marks(m.get('no-memory', []))} | {majority} | {_marks(m.get('rerun', []))} | "
            f"{_marks(m.get('memory', []))} | {_marks(m.get('lessons-only', []))} | {_cell(note)} |"
        )
    lines += [
        "", f"Measured tasks: {s['tasks_measured']}, solved without memory (majority of the reference trials): "
            f"{s['tasks_solved_without_memory']}. Intervals: 95 % Wilson score, trials pooled.", "",
        "| method | success rate | Gain | Regression | calls / task | tokens / task | wall s / task |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in METHODS:
        e = s["methods"][name]
        cost = e["cost_per_task"]
        gain = _pct(e["gain"]) if "gain" in e else "–"
        reg = _pct(e["regression"]) if "regression" in e else "–"
        lines.append(f"| {name} | {_pct(e['success_rate'])} | {gain} | {reg} | {cost.get('model_calls', '–')} | "
                     f"{cost.get('tokens', '–')} | {cost.get('wall_s', '–')} |")
    band = s["noise_band"]
    fmt = lambda v: "n/a" if v is None else f"{v:.1%}"  # noqa: E731
    lines += [
        "",
        f"Noise band (rerun against the reference): Gain {fmt(band['gain'])}, Regression {fmt(band['regression'])}.",
        "", f"**{_cell(verdict(s))}**",
    ]
    if "memory_vs_lessons_only_tokens" in s:
        lines.append(f"Tokens per task, memory / lessons-only: {s['memory_vs_lessons_only_tokens']}×.")
    t = report["training"]
    if t["tasks"]:
        lines.append(
            f"Training: {t['runs']} run(s) on {t['tasks']} task(s), {t['model_calls']} model calls, {t['tokens']} "
            "tokens."
        )
    if report["errors"]:
        lines += ["", "Errors (these cells run again on the next `tether eval` with the same --out):"]
        lines += [f"- {_cell(e)}" for e in report["errors"]]
    return "\n".join(lines) + "\n"
