"""`tether gc`: prune what finished runs no longer need, for the whole home (runtime.run.gc)."""

from __future__ import annotations

from typing import Annotated

import typer

from tether.runtime.cli.common import HomeOption, JsonOption, config, errors_exit, out, print_json
from tether.runtime.terminal import safe


def _size(n: int) -> str:
    return f"{n / 1024:.0f} KB" if n < 1 << 20 else f"{n / (1 << 20):.1f} MB"


def gc(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would be freed; change nothing.")] = False,
    home: HomeOption = None,
    json: JsonOption = False,
) -> None:
    """Prune finished runs' checkpoints and old snapshots, merge near-equal lessons; a live run is never touched."""
    from tether.runtime.run.gc import gc_home

    cfg = config(home)
    with errors_exit():
        report = gc_home(cfg, dry_run=dry_run)
    if json:
        print_json(report.model_dump())
        return
    verb = "would free" if dry_run else "freed"
    out.print(f"{verb} {_size(report.checkpoint_bytes)} of checkpoints from {len(report.runs_pruned)} finished "
              f"run(s); checkpoint database {_size(report.db_before)} -> {_size(report.db_after)}")
    if not dry_run:
        out.print(f"removed {len(report.snapshots_pruned)} snapshot(s), kept the newest "
                  f"{cfg.workspace.snapshot_keep}")
    verb = "would merge" if dry_run else "merged"
    for gone, kept in report.lessons_merged.items():
        out.print(f"{verb} lesson {safe(gone)} into {safe(kept)} (the same text; its history stays in its file)")
    for group in report.lessons_left:
        out.print(f"left lessons {safe(', '.join(group))}: the same text, but one is a person's (pinned)")
    for run_id, why in report.skipped.items():
        out.print(f"left run {safe(run_id)}: {why}")


def register(app: typer.Typer) -> None:
    """Add this area's commands to the main app."""
    app.command("gc")(gc)
