"""Run records and their rendering: the JSON object and the Rich tables.

Parts: `to_json()` (the `--json` object: run_id, status, steps, gate keyed R01..R18),
`LiveView` (a Rich live view of the DAG and the last commands, fed by journal
events), and `render_final()` (summary and gate table).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table

from tether.common.events import CommandProposed, Event, ExecFinished, StepChanged, VerdictRecorded
from tether.common.hostexec_check import HOST_PREFIX
from tether.runtime.hooks.base import RunRecord
from tether.runtime.terminal import plain, safe
from tether.runtime.views.styles import STYLE


def to_json(record: RunRecord) -> dict[str, Any]:
    gate = {r["id"]: {"status": r["status"], "evidence": r["evidence"]} for r in (record.gate or {}).get("results", [])}
    return {
        "run_id": record.run_id,
        "status": record.status,
        "reason": record.reason,
        "steps": [
            {"id": s["id"], "status": s["status"], "reason": s["reason"], "commands": s["commands"]}
            for s in record.steps
        ],
        "gate": gate,
        "gate_passed": (record.gate or {}).get("passed"),
        "awaiting": record.awaiting,
        "review": (record.gate or {}).get("review", []),
        "host_code": record.host_code,
        "checks": (record.gate or {}).get("checks", []),
        "gate_proof": (record.gate or {}).get("proof", "none"),
        "gate_proof_detail": (record.gate or {}).get("proof_detail", ""),
        "project_tests": (record.gate or {}).get("project", []),
        "summary": (record.summary or {}).get("text"),
        "journal": str(record.journal_path),
        "shadow": record.shadow,
        "changes": record.changes,
        "notices": record.notices,
        **record.memory,
    }


class LiveView:
    """Steps and the last commands, redrawn on every journal event (stderr)."""

    def __init__(self, console: Console, last: int = 8) -> None:
        self.steps: dict[str, str] = {}
        self.cmds: dict[str, dict[str, Any]] = {}
        self.last = last
        self.live = Live(self._render(), console=console, refresh_per_second=8, transient=False)

    def __enter__(self) -> LiveView:
        self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.live.__exit__(*exc)  # type: ignore[arg-type]

    def on_event(self, e: Event) -> None:
        if isinstance(e, StepChanged):
            self.steps[e.step] = e.status
        elif isinstance(e, CommandProposed):
            self.cmds[e.cmd_id] = {"step": e.step, "command": e.command, "verdict": "", "exit": ""}
        elif isinstance(e, VerdictRecorded) and e.cmd_id in self.cmds:
            self.cmds[e.cmd_id]["verdict"] = e.decision
        elif isinstance(e, ExecFinished) and e.cmd_id in self.cmds:
            self.cmds[e.cmd_id]["exit"] = str(e.exit_code)
        else:
            return
        self.live.update(self._render())

    def _render(self) -> Group:
        steps = Table(title="steps", show_edge=False)
        steps.add_column("step")
        steps.add_column("status")
        for sid, st in self.steps.items():
            steps.add_row(safe(sid), f"[{STYLE.get(st, '')}]{safe(st)}[/]")
        cmds = Table(title="commands", show_edge=False)
        for col in ("step", "command", "verdict", "exit"):
            cmds.add_column(col)
        for c in list(self.cmds.values())[-self.last:]:
            cmds.add_row(safe(c["step"]), safe(c["command"][:70]), safe(c["verdict"]), safe(c["exit"]))
        return Group(steps, cmds)


PROOF = {"person": "your checks", "project": "the project's own tests", "run": "only checks the run wrote itself",
         "none": "nothing"}


def _render_proof(console: Console, gate: dict[str, Any]) -> None:
    """Where the gate's proof came from, and the project's tests that broke."""
    source = str(gate.get("proof") or "none")
    detail = str(gate.get("proof_detail") or "")
    console.print(f"[bold]proof:[/] {PROOF.get(source, safe(source))}" + (f" ({safe(detail)})" if detail else ""))
    broken = [t for t in gate.get("project") or [] if t.get("before") == "pass" and t.get("after") != "pass"]
    for t in broken[:10]:
        after = safe(str(t.get("after") or "gone"))
        console.print(f"[red]broken:[/] {safe(str(t.get('id')))} passed before the run, {after} now")


def render_final(console: Console, record: RunRecord) -> None:
    """Summary, gate table and the status line."""
    if record.summary and record.summary.get("text"):
        console.print(f"[bold]summary:[/] {safe(record.summary['text'])}")
    if record.gate:
        table = Table(title="completion gate", show_edge=False)
        for col in ("id", "requirement", "status", "evidence"):
            table.add_column(col)
        for r in record.gate["results"]:
            table.add_row(
                safe(r["id"]), safe(r["title"]), f"[{STYLE[r['status']]}]{safe(r['status'])}[/]", safe(r["evidence"])
            )
        console.print(table)
        _render_proof(console, record.gate)
        _render_review(console, record.gate)
    for line in record.host_code:
        if line.startswith(HOST_PREFIX) and line in (record.gate or {}).get("review", []):
            continue  # the gate's review list above already said it
        console.print(f"[bold yellow]host code:[/] {safe(line)}")
    _render_memory(console, record.memory)
    _render_changes(console, record)
    color = STYLE.get(record.status, "red")
    console.print(
        f"[bold {color}]{safe(record.status)}[/] run {safe(record.run_id)}"
        + (f": {safe(record.reason)}" if record.reason else "")
    )


def _render_changes(console: Console, record: RunRecord, listed: int = 20) -> None:
    """What the run changed (a shadow run: in its copy) and what the person must be told."""
    changes = record.changes or {}
    rows = [(mark, p) for mark, key in (("+", "added"), ("~", "modified"), ("-", "deleted"))
            for p in changes.get(key, [])]
    total = sum((changes.get("counts") or {}).values()) or len(rows)
    if rows:
        where = "in the shadow copy" if record.shadow else "in the workspace"
        console.print(f"[bold]changes {where}:[/] {total}")
        for mark, p in rows[:listed]:
            console.print(f"  {mark} {safe(p)}")
        if total > listed:
            console.print(f"  ... and {total - listed} more")
    for note in record.notices:
        console.print(f"[bold yellow]note:[/] {safe(note)}")


def _render_review(console: Console, gate: dict[str, Any]) -> None:
    """Why a person must look, and the diff of the tests the run touched."""
    for reason in gate.get("review") or []:
        console.print(f"[bold yellow]review:[/] {safe(reason)}")
    if gate.get("review_diff"):
        console.print(plain(gate["review_diff"]), markup=False, highlight=False)


def _render_memory(console: Console, memory: dict[str, Any]) -> None:
    """One line on what the memory cycle did after the run."""
    if not memory:
        return
    if memory.get("memory_error"):
        console.print(f"[yellow]memory:[/] cycle failed: {safe(memory['memory_error'])}")
        return
    revised = ", ".join(
        safe(f"{r['id']} {r['verdict'] or r['status']}" + (" (proposed: `tether memory proposals`)"
                                                          if r.get("status") == "proposed" else ""))
        for r in memory.get("lessons_revised", []))
    console.print(
        f"[bold]memory:[/] relied on {len(memory.get('lessons_used', []))} lesson(s)"
        + (f", revised {revised}" if revised else "")
        + f", wrote {len(memory.get('lessons_written', []))} new, {len(memory.get('rules_fired', []))} rule(s) in "
          "the prompt"
    )
