"""CLI of memory: `tether memory list | show ID | search QUERY | rebuild | forget --run|--lesson|--rule ID |
proposals | accept LESSON | reject LESSON | log`."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.table import Table

from tether.memory.api import list_memory, rebuild_index, search_memory, show_item
from tether.memory.forget import forget_lesson, forget_rule, forget_run
from tether.memory.history import is_repository, memory_log
from tether.memory.review import accept_proposal, list_proposals, reject_proposal
from tether.memory.store import MemoryStore
from tether.runtime.cli.common import (
    HomeOption,
    JsonOption,
    config,
    errors_exit,
    fail,
    out,
    print_json,
)
from tether.runtime.terminal import plain, safe


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


def _run_id(home: Any, store: MemoryStore, text: str) -> str:
    """A run id as people type it (`last`, a unique prefix) made whole; `text` itself when memory knows it."""
    if store.has_run(text) or store.lesson_path(text).is_file() or (store.rules_dir / f"{text}.md").is_file():
        return text
    from tether.runtime.run_ids import UnknownRunError, resolve

    try:
        return resolve(config(home).runs_dir, text)
    except UnknownRunError:
        return text  # not a run of this home: memory's own lookup says what is wrong


@memory_app.command("list")
def list_cmd(home: HomeOption = None, json: JsonOption = False) -> None:
    """Every lesson, rule and run; unlisted = its MEMORY.md line was deleted."""
    store = _store(home)
    with errors_exit():
        data = list_memory(store)
    if json:
        print_json(data)
        return
    table = Table("id", "kind", "status", "outcome / conf.", "confirmed / last tried", "text")
    for x in data["lessons"]:
        status = x["status"] if x["listed"] else "unlisted"
        table.add_row(safe(x["id"]), "lesson", safe(status), safe(x["source_outcome"] or "person"),
                      f"{x['confirmations']}x" + (f", {x['pending']} proposed" if x.get("pending") else ""),
                      safe(x["text"][:90]))
    for r in data["rules"]:
        table.add_row(
            safe(r["id"]),
            "rule",
            safe(r["status"] if r["listed"] else "unlisted"),
            f"{r['confidence_now']:.2f}",
            safe((r.get("last_tried") or "never")[:16]),
            safe(r["text"][:90]),
        )
    for m in data["runs"]:
        table.add_row(safe(m["run_id"]), "run", f"score {m['score']:+d}", safe(m["outcome"]), "", safe(m["goal"][:90]))
    out.print(table if table.row_count else f"memory at {safe(data['root'])} is empty")


@memory_app.command("show")
def show_cmd(item_id: Annotated[str, typer.Argument(
                 help="Lesson, rule or run id (a run: its whole id, a unique prefix, or `last`).")],
             home: HomeOption = None, json: JsonOption = False) -> None:
    """One lesson (with its revision history), rule or run."""
    store = _store(home)
    with errors_exit():
        item = show_item(store, _run_id(home, store, item_id))
    if json:
        print_json(item)
        return
    out.print(safe(store.root / item["path"]))
    if item["kind"] == "lesson":
        _show_lesson(item)
    elif item["kind"] == "rule":
        _show_rule(item)
    else:
        out.print(plain((store.root / item["path"]).read_text(encoding="utf-8")), markup=False)


def _show_lesson(x: dict[str, Any]) -> None:
    out.print(
        plain(
            f"{x['id']} · {x['status']} · "
            + (f"from run {x['source_run']} ({x['source_outcome']})" if x["source_run"] else "written by a person")
            + (" · pinned (automatic revision only proposes)" if x.get("pinned") else "")
            + f" · project {x.get('project') or 'unknown'} · confirmed {x['confirmations']}x · used {x['uses']}x"
        ),
        markup=False,
    )
    out.print(plain(f"Insight: {x['insight']}\nApplicability: {x['applicability'] or 'not stated'}"), markup=False)
    table = Table("when", "run", "verdict", "status", "change / reason", title="Revision history")
    for h in x["revisions"]:
        change = f"{h['before']!r} -> {h['after']!r}" if "after" in h and h.get("before") else ""
        if "after" in h and h.get("verdict") == "outdated" and "retired:" in h.get("reason", ""):
            change = f"retired {h['before']!r}"
        if h["status"] == "proposed":
            change = ("proposes to keep the text" if h.get("verdict") == "confirmed"
                      else f"proposes {h['proposed']!r}" if h.get("proposed") else "proposes to retire it")
            if h.get("proposed_applicability"):
                change += f" (applies: {h['proposed_applicability']!r})"
        detail = "; ".join(p for p in (change, h.get("reason", "")) if p)
        table.add_row(
            safe(h["at"][:19]),
            safe(h["run_id"] or "-"),
            safe(h["verdict"] or "unreadable"),
            safe(h["status"]),
            safe(detail),
        )
    out.print(table if table.row_count else "Revision history: none yet")


def _show_rule(r: dict[str, Any]) -> None:
    out.print(plain(f"{r['id']} · {r['status']} · confidence {r['confidence_now']:.2f} in force "
                    f"({r['confidence']:.2f} when last updated) · "
                    f"applied {len(r['applied'])}x · last tried {r.get('last_tried') or 'never'} · "
                    f"project {r.get('project') or 'unknown'}"), markup=False)
    out.print(plain(f"Rule: {r['text']}\nError ({r['tool']}): {r['error']}"), markup=False)


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
        out.print(
            plain(f"{h['score']:.3f}  {h.get('id') or h.get('run_id')}  {h.get('text') or h.get('goal')}"), markup=False
        )
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
def forget_cmd(
    run: Annotated[str | None, typer.Option(
        "--run", help="Run id to forget, with all learnt from it (a unique prefix or `last` works).")] = None,
    lesson: Annotated[str | None, typer.Option("--lesson", help="Lesson id to forget.")] = None,
    rule: Annotated[str | None, typer.Option("--rule", help="Rule id to forget.")] = None,
    home: HomeOption = None,
    json: JsonOption = False,
) -> None:
    """Forget a run (and everything derived from it), one lesson, or one rule."""
    given = [(k, v) for k, v in (("run", run), ("lesson", lesson), ("rule", rule)) if v is not None]
    if len(given) != 1:
        fail("give exactly one of --run ID, --lesson ID, --rule ID (`tether memory list` shows the ids)")
    store = _store(home)
    kind, item_id = given[0]
    if kind == "run":
        item_id = _run_id(home, store, item_id)
    with errors_exit():
        if kind == "lesson":
            result: dict[str, Any] = forget_lesson(store, item_id)
        elif kind == "rule":
            result = forget_rule(store, item_id)
        else:
            result = forget_run(store, item_id, datetime.now(UTC)).model_dump()
    if json:
        print_json(result)
    elif kind == "run":
        out.print(f"forgot run {safe(item_id)}: {len(result['lessons_deleted'])} lesson(s) deleted, "
                  f"{len(result['lessons_changed'])} revised back, {len(result['rules_deleted'])} rule(s) deleted, "
                  f"{len(result['rules_changed'])} rule(s) updated")
    else:
        out.print(f"forgot {kind} {safe(item_id)}")
    if not json and is_repository(store.root):
        out.print("note: the memory folder is a git repository; commits made before still hold what was forgotten "
                  "(forgetting never rewrites git history: see docs/memory.md)")


@memory_app.command("log")
def log_cmd(limit: Annotated[int, typer.Option(min=1, help="Entries at most, newest first.")] = 30,
            home: HomeOption = None, json: JsonOption = False) -> None:
    """History of lessons and rules: git commits when the memory folder is a repository, else their records."""
    store = _store(home)
    with errors_exit():
        data = memory_log(store, limit)
    if json:
        print_json(data)
        return
    if not data["entries"]:
        out.print(f"no history yet in {safe(data['root'])}")
        return
    if data["source"] == "git":
        table = Table("when", "commit", "message", "lessons and rules", title=safe(f"git log of {data['root']}"))
        for e in data["entries"]:
            table.add_row(safe(e["at"][:19]), safe(e["commit"]), safe(e["event"]), safe(", ".join(e["items"])))
    else:
        table = Table("when", "item", "run", "what",
                      title="lesson and rule records (the folder is not a git repository)")
        for e in data["entries"]:
            table.add_row(safe(e["at"][:19]), safe(e["item"]), safe(e["run_id"] or "-"), safe(e["event"]))
    out.print(table)


@memory_app.command("proposals")
def proposals_cmd(home: HomeOption = None, json: JsonOption = False) -> None:
    """What automatic revision proposed for pinned lessons (a person's text), waiting for accept or reject."""
    store = _store(home)
    with errors_exit():
        found = list_proposals(store)
    if json:
        print_json({"proposals": found})
        return
    if not found:
        out.print("no pending proposals")
        return
    table = Table("lesson", "run", "verdict", "would", "now", "proposed")
    for p in found:
        proposed = p["proposed"] + (f" (applies: {p['proposed_applicability']})" if p["proposed_applicability"] else "")
        table.add_row(safe(p["lesson"]), safe(p["run_id"]), safe(p["verdict"]), safe(p["action"]),
                      safe(p["insight"][:80]), safe(proposed[:120]))
    out.print(table)
    out.print(safe("accept: `tether memory accept LESSON [--run RUN]`; "
                   "reject: `tether memory reject LESSON [--run RUN]`"))


RunOption = Annotated[str | None, typer.Option("--run", help="The run whose proposal it is (default: the newest).")]


@memory_app.command("accept")
def accept_cmd(lesson: Annotated[str, typer.Argument(help="Lesson id (`tether memory proposals` lists them).")],
               run: RunOption = None, home: HomeOption = None, json: JsonOption = False) -> None:
    """Apply a proposal of automatic revision to a pinned lesson."""
    store = _store(home)
    with errors_exit():
        result = accept_proposal(store, lesson, run, datetime.now(UTC))
    if json:
        print_json(result)
        return
    p = result["accepted"]
    out.print(safe(f"accepted {p['verdict']} from run {p['run_id']} on {lesson}: {p['action']}; "
                   f"now {result['status']}" + ("" if result["pinned"] else ", no longer pinned")
                   + (f"; {result['pending']} more pending" if result["pending"] else "")))


@memory_app.command("reject")
def reject_cmd(lesson: Annotated[str, typer.Argument(help="Lesson id (`tether memory proposals` lists them).")],
               run: RunOption = None, home: HomeOption = None, json: JsonOption = False) -> None:
    """Decline a proposal of automatic revision; the lesson keeps its text."""
    store = _store(home)
    with errors_exit():
        result = reject_proposal(store, lesson, run, datetime.now(UTC))
    if json:
        print_json(result)
        return
    p = result["rejected"]
    out.print(safe(f"rejected {p['verdict']} from run {p['run_id']} on {lesson}; the text is unchanged"
                   + (f"; {result['pending']} more pending" if result["pending"] else "")))


def register(app: typer.Typer) -> None:
    """Add this area's commands to the main app."""
    app.add_typer(memory_app, name="memory")
