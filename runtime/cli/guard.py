"""CLI: `tether guard` judges a command (or a JSONL batch) with the guardian.

Exit codes: 0 allow, 1 ask, 2 deny, and 2 for every error (fail closed); with
--batch, 0 unless the input cannot be read (then one line on stderr and 2).
Several words after `--` are quoted back with `shlex.join`; `--user-home` is
the person's home, `--home` Tether's (see `runtime.cli.guard_fast`). The work is done by
`runtime.cli.guard_fast`, which `runtime.cli.app.main` also calls directly (without
building this typer app) for the plain forms of the command line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tether.runtime.cli import guard_fast
from tether.runtime.cli.common import HomeOption, JsonOption

EXIT = guard_fast.EXIT


def guard(
    command: Annotated[list[str] | None, typer.Argument(help="The command (after --).")] = None,
    json_out: JsonOption = False,
    workspace: Annotated[Path | None, typer.Option("--workspace", help="Task workspace (default: cwd).")] = None,
    cwd: Annotated[Path | None, typer.Option("--cwd", help="Working directory (default: workspace).")] = None,
    user_home: Annotated[Path | None, typer.Option(
        "--user-home", help="The person's home folder: what ~ and $HOME stand for (default: /home/tether).")] = None,
    batch: Annotated[Path | None, typer.Option("--batch", help="JSONL file of {command, cwd?}.")] = None,
    explain: Annotated[bool, typer.Option(
        "--explain", help="Show what was analysed, which rules fired where, and what to do instead.")] = False,
    rules: Annotated[bool, typer.Option(
        "--rules", help="List every rule (id, decision, example, alternative).")] = False,
    home: HomeOption = None,
) -> None:
    """Judge a bash command: exit 0 allow, 1 ask, 2 deny (2 also for any error).

    One word after -- is the command line as written; several words are an argv, quoted with shlex.join.
    """
    if rules or explain:
        from tether.runtime.cli import guard_explain

        if rules:
            raise typer.Exit(guard_explain.rules(json_out))
        if not command:
            raise typer.Exit(guard_fast.error("give the command to explain after --"))
        raise typer.Exit(guard_explain.explain(command, json_out, workspace, cwd, user_home, home))
    del home  # Tether's home: accepted like everywhere else; the plain verdict reads no config
    if batch is not None:
        raise typer.Exit(guard_fast.batch(batch, workspace, user_home))
    if not command:
        raise typer.Exit(guard_fast.error("give a command after --, or --batch FILE"))
    raise typer.Exit(guard_fast.judge(command, json_out, workspace, cwd, user_home))


def register(app: typer.Typer) -> None:
    """Add `guard` to the main app."""
    app.command("guard")(guard)
