"""CLI of what a run changed in the person's folder: `tether rollback` and `tether apply`.

Both go through the one three-way merge (runtime.workspace.merge): only the
run's own paths, only where the folder still holds what is expected, every
conflict shown, `--force` to override (backed up), `--dry-run` to look
first. Apply also lists what it would bring over that runs on the person's
machine, and says when the run did not end `success`: either needs `--yes`.
Exit codes: 0 done (or nothing to do), 1 refused (conflicts, newer
runs), 2 bad input or an error.
"""

from __future__ import annotations

from typing import Annotated

import typer

from tether.runtime.cli.common import (
    HomeOption,
    JsonOption,
    RunArg,
    config,
    err,
    errors_exit,
    out,
    print_json,
    resolve_run,
)
from tether.runtime.terminal import one_line, safe

DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Show what would be done, change nothing.")]
ForceOption = Annotated[bool, typer.Option(
    "--force", help="Also overwrite paths changed since (conflicts); what is overwritten is backed up first.")]
LISTED = 50
"""Paths listed per kind; the counts are always whole."""


def _list(label: str, paths: list[str]) -> None:
    if not paths:
        return
    out.print(f"{label} ({len(paths)}):")
    for p in paths[:LISTED]:
        out.print(f"  {safe(p)}")
    if len(paths) > LISTED:
        out.print(f"  ... and {len(paths) - LISTED} more (--json lists all)")


def _conflicts(conflicts: list, title: str = "conflict") -> None:
    for c in conflicts[:LISTED]:
        err.print(f"[bold yellow]{title}:[/] {safe(c.path)}: {safe(c.why)} (now: {safe(c.now)}; expected: "
                  f"{safe(c.expected)}; would put: {safe(c.target)})")
    if len(conflicts) > LISTED:
        err.print(f"... and {len(conflicts) - LISTED} more conflicts (--json lists all)")


def rollback(
    run_id: RunArg,
    dry_run: DryRunOption = False,
    force: ForceOption = False,
    with_newer: Annotated[bool, typer.Option(
        "--with-newer", help="When newer runs changed the same paths, undo them first (newest first).")] = False,
    home: HomeOption = None,
    json: JsonOption = False,
) -> None:
    """Undo what RUN_ID changed, and only that; refuse, showing each conflict, where you changed it since."""
    from tether.runtime.trust.rollback import rollback_run

    cfg = config(home)
    run_id = resolve_run(cfg, run_id)
    with errors_exit():
        result = rollback_run(cfg, run_id, dry_run=dry_run, force=force, with_newer=with_newer)
    if json:
        print_json(result.model_dump(mode="json"))
    else:
        verb = "would" if dry_run else ""
        for undo in result.runs:
            out.print(f"[bold]run {safe(undo.run_id)}[/]" + (" (dry run)" if dry_run else ""))
            _list(f"{verb} put back".strip(), undo.reverted)
            _list(f"{verb} remove (made by the run)".strip(), undo.removed)
            _list(f"{verb} recreate (removed by the run)".strip(), undo.recreated)
            if undo.already:
                out.print(f"already as before the run: {len(undo.already)}")
            _conflicts(undo.conflicts)
            _conflicts(undo.kept, "kept")
            if undo.backup:
                out.print(f"what was overwritten or removed is kept in {safe(undo.backup)}")
            for kind in undo.demoted:
                out.print(f"demoted {safe(kind)}")
        if result.done:
            d = result.restore.diff if result.restore else None
            if d is not None:
                out.print(f"restored {safe(result.workspace)}: removed {len(d.added)}, reverted {len(d.modified)}, "
                          f"recreated {len(d.deleted)}")
        elif result.nothing:
            out.print(f"nothing to undo: {safe(result.nothing)}")
        elif not result.refused and not any(r.reverted or r.removed or r.recreated for r in result.runs):
            out.print(f"nothing to undo: {safe(result.workspace)} holds no change of run {safe(run_id)}")
    if result.refused:
        err.print(f"[bold red]refused:[/] {safe(result.refused)}")
        raise typer.Exit(1)
    if result.ledger_error:
        err.print(f"[bold red]error:[/] workspace restored but nothing demoted: {safe(result.ledger_error)}")
        raise typer.Exit(2)


YesOption = Annotated[bool, typer.Option(
    "--yes", help="Apply even what runs code on your machine (each listed), or a run that did not end success.")]


def apply(
    run_id: RunArg,
    dry_run: DryRunOption = False,
    force: ForceOption = False,
    yes: YesOption = False,
    home: HomeOption = None,
    json: JsonOption = False,
) -> None:
    """Bring a shadow run's changes over from its copy into your folder; refuse, showing each conflict."""
    from tether.runtime.workspace.apply import apply_run

    cfg = config(home)
    run_id = resolve_run(cfg, run_id)
    with errors_exit():
        result = apply_run(cfg, run_id, dry_run=dry_run, force=force, yes=yes)
    if json:
        print_json(result.model_dump(mode="json"))
    else:
        verb = "would " if dry_run else ""
        out.print(f"[bold]shadow run {safe(run_id)} -> {safe(result.workspace)}[/]" + (" (dry run)" if dry_run else ""))
        if result.status and result.status != "success":
            err.print(f"[bold yellow]run status:[/] {safe(result.status)} (it did not end success)")
        for line in result.host_code:
            err.print(f"[bold yellow]code that runs on your machine:[/] {safe(one_line(line, 400))}")
        _list(f"{verb}add", result.added)
        _list(f"{verb}change", result.modified)
        _list(f"{verb}delete", result.deleted)
        if result.already:
            out.print(f"already the same in your folder: {len(result.already)}")
        _conflicts(result.conflicts)
        _conflicts(result.kept, "kept")
        if result.backup:
            out.print(f"what was overwritten or removed is kept in {safe(result.backup)}")
        if result.nothing:
            out.print(f"nothing to apply: {safe(result.nothing)}")
        elif not (result.added or result.modified or result.deleted or result.conflicts):
            out.print("nothing to apply: the copy holds no change")
    if result.refused:
        err.print(f"[bold red]refused:[/] {safe(result.refused)}")
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add `rollback` and `apply` to the main app."""
    app.command("rollback")(rollback)
    app.command("apply")(apply)
