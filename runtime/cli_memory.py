"""CLI of memory: `tether memory list | show ID | search QUERY | rebuild | forget --run ID`."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.table import Table

from memory.api import list_memory, rebuild_index, search_memory, show_item
from memory.forget import forget_run
from memory.store import MemoryStore
from runtime.cli_common import HomeOption, JsonOption, config, errors_exit, out, print_json
from runtime.terminal import plain, safe


class KindChoice(StrEnum):
    """What `search` looks among."""

    lesson = "lesson"
    rule = "rule"
    run = "run"


memory_app = typer.Typer(help="Inspect, search, rebuild and prune the agent's memory.", no_args_is_help=True)


def _store(home: Any) -> MemoryStore:
    cfg = config(home)
    with errors_exit():
        return MemoryStore(cfg.memory_dir, cfg.memory)


@memory_app.command("list")
def list_cmd(home: HomeOption = None, json: JsonOption = False) -> None:
    """Every lesson, rule and run; unlisted = its MEMORY.md line was deleted."""
    store = _store(home)
    with errors_exit():
        data = list_memory(store)
    if json:
        print_json(data)
        return
    table = Table("id", "kind", "status", "outcome / conf.", "text")
    for x in data["lessons"]:
        status = x["status"] if x["listed"] else "unlisted"
        table.add_row(safe(x["id"]), "lesson", safe(status), safe(x["source_outcome"]), safe(x["text"][:90]))
    for r in data["rules"]:
        table.add_row(safe(r["id"]), "rule", safe(r["status"] if r["listed"] else "unlisted"), f"{r['confidence']:.2f}", safe(r["text"][:90]))
    for m in data["runs"]:
        table.add_row(safe(m["run_id"]), "run", f"score {m['score']:+d}", safe(m["outcome"]), safe(m["goal"][:90]))
    out.print(table if table.row_count else f"memory at {safe(data['root'])} is empty")


@memory_app.command("show")
def show_cmd(item_id: Annotated[str, typer.Argument(help="Lesson, rule or run id.")],
             home: HomeOption = None, json: JsonOption = False) -> None:
    """One lesson (with its revision history), rule or run."""
    store = _store(home)
    with errors_exit():
        item = show_item(store, item_id)
    if json:
        print_json(item)
        return
    out.print(safe(store.root / item["path"]))
    out.print(plain((store.root / item["path"]).read_text(encoding="utf-8")), markup=False)


@memory_app.command("search")
def search_cmd(query: Annotated[str, typer.Argument(help="Text to match, e.g. a goal.")],
               kind: Annotated[KindChoice, typer.Option(help="What to search.")] = KindChoice.lesson,
               limit: Annotated[int, typer.Option(min=1, help="Results at most.")] = 5,
               home: HomeOption = None, json: JsonOption = False) -> None:
    """Search memory the way the agent's recall does."""
    store = _store(home)
    with errors_exit():
        hits = search_memory(store, query, kind.value, limit)
    if json:
        print_json({"query": query, "kind": kind.value, "hits": hits})
        return
    for h in hits:
        out.print(plain(f"{h['score']:.3f}  {h.get('id') or h.get('run_id')}  {h.get('text') or h.get('goal')}"), markup=False)
    if not hits:
        out.print("no matches")


@memory_app.command("rebuild")
def rebuild_cmd(home: HomeOption = None, json: JsonOption = False) -> None:
    """Recreate the index from the markdown files."""
    store = _store(home)
    with errors_exit():
        result = rebuild_index(store)
    if json:
        print_json(result)
        return
    out.print(safe(f"indexed {result['indexed']} items ({result['backend']}) from {result['root']}"))


@memory_app.command("forget")
def forget_cmd(run: Annotated[str, typer.Option("--run", help="Run id to forget, with all learnt from it.")],
               home: HomeOption = None, json: JsonOption = False) -> None:
    """Remove a run and every lesson, revision and rule derived from it."""
    store = _store(home)
    with errors_exit():
        report = forget_run(store, run, datetime.now(UTC))
    if json:
        print_json(report.model_dump())
        return
    out.print(f"forgot run {safe(run)}: {len(report.lessons_deleted)} lesson(s) deleted, "
              f"{len(report.lessons_changed)} revised back, {len(report.rules_deleted)} rule(s) deleted, "
              f"{len(report.rules_changed)} rule(s) updated")


def register(app: typer.Typer) -> None:
    """Add this area's commands to the main app."""
    app.add_typer(memory_app, name="memory")
