"""CLI to look at runs: `tether runs`, `tether show RUN_ID`, `tether report RUN_ID`.

Read-only over the run folders (the report is the one file written). Every
text from the model or the sandbox goes through `runtime.views.text` before it
reaches the terminal or the page.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from tether.runtime.cli.common import (
    HomeOption,
    JsonOption,
    RunArg,
    config,
    err,
    errors_exit,
    fail,
    out,
    print_json,
    resolve_run,
)
from tether.runtime.cli.show_changes import show_changes
from tether.runtime.views.console import PROOF, STYLE
from tether.runtime.views.text import cell

if TYPE_CHECKING:
    from tether.runtime.views.run_view import RunView



def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if ts else "?"


def _dur(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    s = int(round(seconds))
    return (
        f"{s // 3600}h{s % 3600 // 60:02d}m"
        if s >= 3600
        else f"{s // 60}m{s % 60:02d}s"
        if s >= 60
        else f"{seconds:.1f}s"
    )


def runs(
    status: Annotated[
        str | None,
        typer.Option(
            "--status", help="Only runs with this status (success, failed, blocked, interrupted, running, ...)."
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since", help="Only runs started since a date (2026-11-30, 2026-11-30T08:00) or an age (90m, 12h, 7d)."
        ),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="At most this many runs, newest first.")] = 50,
    json_out: JsonOption = False,
    home: HomeOption = None,
) -> None:
    """List runs, newest first: status, start, duration, steps done/total, gate pass/fail/n-a, lessons used/written."""
    from tether.runtime.cli.runs_fast import show as show_runs

    cfg = config(home)  # `tether runs` itself mostly takes runtime.cli.runs_fast (no typer, rich or pydantic)
    raise typer.Exit(show_runs(cfg.runs_dir, status, since, limit, json_out))


def _load(run_id: str, home: Path | None, with_diff: bool = False) -> RunView:
    from tether.runtime.views.run_view import load_run

    cfg = config(home)
    run_id = resolve_run(cfg, run_id)
    with errors_exit(2):
        return load_run(cfg.runs_dir, run_id, cfg.memory_dir, with_diff=with_diff)


DiffOption = Annotated[bool, typer.Option(
    "--diff", help="Also show the content diff of the run (text inline, binary files summarised).")]


def show(run_id: RunArg, diff: DiffOption = False, json_out: JsonOption = False, home: HomeOption = None) -> None:
    """The run's plan, every command (verdict, approval, exit), the gate, what it changed, lessons, cost, next."""
    view = _load(run_id, home, diff)
    if json_out:
        print_json(view.model_dump(mode="json"))
        return
    for w in view.warnings:
        err.print(f"[yellow]warning:[/] {cell(w)}")
    color = STYLE.get(view.status, "red")
    out.print(
        f"[bold]run {cell(view.run_id)}[/]  [bold {color}]{cell(view.status)}[/]"
        + (f": {cell(view.reason, 300)}" if view.reason else "")
    )
    out.print(
        f"goal: {cell(view.goal, 300)}\nworkspace: {cell(view.workspace)}  model: {cell(view.model)}  shadow: "
        f"{view.shadow}"
    )
    out.print(f"started {_when(view.started_at)}, took {_dur(view.duration_s)}")
    _show_plan(view)
    _show_commands(view)
    _show_gate(view)
    show_changes(view, diff)
    _show_lessons(view)
    c = view.cost
    out.print(f"[bold]cost:[/] {c.get('model_calls') if c.get('model_calls') is not None else '?'} model call(s), "
              f"{c.get('tokens') if c.get('tokens') is not None else '?'} token(s), {c['commands']} command(s) "
              f"({c['exec_s']}s in the sandbox), wall {_dur(view.duration_s)}"
              + (f", {c['memory_calls']} memory call(s)" if c.get("memory_calls") else ""))
    if view.next:
        out.print("[bold]next:[/] " + "  |  ".join(f"`{cell(n)}`" for n in view.next))


def _show_plan(view: RunView) -> None:
    table = Table(title="plan", show_edge=False)
    for col in ("step", "status", "depends on", "history", "commands", "reason"):
        table.add_column(col, overflow="fold")
    for s in view.steps:
        note = f" (blocked by {cell(s.blocked_by)})" if s.blocked_by else ""
        table.add_row(
            cell(s.id, 40),
            f"[{STYLE.get(s.status, '')}]{cell(s.status)}[/]",
            cell(", ".join(s.depends_on), 60),
            cell(" → ".join(s.history)) + note,
            str(len(s.commands)),
            cell(s.reason, 120),
        )
    out.print(table)
    for err_text in view.plan_rejections:
        out.print(f"[yellow]plan rejected:[/] {cell(err_text, 300)}")
    for a in view.answers:
        where = f"{a['site']}" + (f" {a['step']}" if a.get("step") else "") + f" #{a.get('turn')}"
        out.print(f"[yellow]model answer not used[/] ({cell(where)}): {cell(a['problem'], 300)}")
        out.print(f"  [dim]it said:[/] {cell(a.get('raw', ''), 400)}")


def _show_commands(view: RunView) -> None:
    table = Table(title="commands", show_edge=False)
    for col in ("id", "command", "verdict", "approval", "exit", "state"):
        table.add_column(col, overflow="fold")
    for c in view.commands:
        verdict = (c.decision or "-") + (f"→{c.enforced}" if c.enforced and c.enforced != c.decision else "")
        exit_code = "-" if c.exit_code is None else str(c.exit_code) + (" (timeout)" if c.timed_out else "")
        table.add_row(
            cell(c.id, 40), cell(c.command, 90), cell(verdict), cell(c.approval or "-"), exit_code, cell(c.state)
        )
    out.print(table)


def _show_gate(view: RunView) -> None:
    if not view.gate:
        out.print("[dim]gate: not reached[/]")
        return
    table = Table(title=f"completion gate: {'passed' if view.gate.get('passed') else 'failed'}", show_edge=False)
    for col in ("id", "status", "evidence"):
        table.add_column(col, overflow="fold")
    for r in view.gate.get("results", []):
        st = str(r.get("status"))
        table.add_row(cell(r.get("id")), f"[{STYLE.get(st, '')}]{cell(st)}[/]", cell(r.get("evidence", ""), 160))
    out.print(table)
    proof = PROOF.get(str(view.gate.get("proof") or "none"), "nothing")
    detail = str(view.gate.get("proof_detail") or "")
    out.print(f"[bold]proof:[/] {proof}" + (f" ({cell(detail, 200)})" if detail else ""))
    project = view.gate.get("project") or []
    if project:
        table = Table(title="the project's own tests (they existed before the run)", show_edge=False)
        for col in ("test", "before", "after"):
            table.add_column(col, overflow="fold")
        for t in project[:40]:
            table.add_row(cell(t.get("id"), 100), cell(t.get("before") or "-"), cell(t.get("after") or "-"))
        out.print(table)
    for item in view.gate.get("review") or []:
        if not str(item).startswith("code that runs on your machine: "):  # the changes part says it
            out.print(f"[yellow]needs review:[/] {cell(item, 300)}")
    if view.tests_diff:
        out.print(
            f"[yellow]test files changed:[/] see {cell(view.run_id)}/tests.diff or `tether report {cell(view.run_id)}`"
        )
    checks = view.gate.get("checks") or []
    if checks:
        table = Table(title="checks the gate re-ran itself (before = on the pre-run copy)", show_edge=False)
        for col in ("command", "by", "kind", "before", "after", "note"):
            table.add_column(col, overflow="fold")
        for c in checks:
            table.add_row(cell(c.get("command"), 80), cell(c.get("source", "")), cell(c.get("kind", "")),
                          cell("-" if c.get("before_exit") is None else c["before_exit"]),
                          cell("-" if c.get("after_exit") is None else c["after_exit"]),
                          cell(c.get("skipped") or c.get("reason") or "", 80))
        out.print(table)


def _show_lessons(view: RunView) -> None:
    for x in view.lessons:
        revs = ", ".join(f"{r['verdict'] or '?'} {r['status']}" for r in x["revisions"]) or "not revised"
        out.print(f"[bold]lesson[/] {cell(x['id'])}: {cell(x.get('title') or '(file missing)', 80)} — {cell(revs)}")
    if view.lessons_written:
        out.print(f"[bold]lessons written:[/] {cell(', '.join(view.lessons_written))}")
    if view.memory_error:
        out.print(f"[yellow]memory:[/] cycle failed: {cell(view.memory_error, 200)}")


def report(
    run_id: RunArg,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Where to write the HTML (default: <run folder>/report.html).")
    ] = None,
    json_out: JsonOption = False,
    home: HomeOption = None,
) -> None:
    """Write one self-contained HTML report of the run (DAG, commands, gate, lessons, shadow audit)."""
    from tether.runtime.views.html_report import render_html

    view = _load(run_id, home, with_diff=True)
    cfg = config(home)
    target = output or (cfg.runs_dir / view.run_id / "report.html")
    if target.is_dir():
        fail(f"{target} is a folder; pass -o FILE.html")
    try:
        target.write_text(render_html(view), encoding="utf-8")
    except OSError as e:
        fail(f"cannot write {target}: {e.strerror}; pass -o to a writable path")
    for w in view.warnings:
        err.print(f"[yellow]warning:[/] {cell(w)}")
    if json_out:
        print_json({"run_id": run_id, "report": str(target), "warnings": view.warnings})
    else:
        out.print(cell(target))


def register(app: typer.Typer) -> None:
    """Add this area's commands to the main app."""
    app.command("runs")(runs)
    app.command("show")(show)
    app.command("report")(report)
