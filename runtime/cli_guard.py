"""CLI: `tether guard` judges a command (or a JSONL batch) with the guardian.

Exit codes: 0 allow, 1 ask, 2 deny; with --batch, 0 unless the input cannot
be read (then one line on stderr and 2).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from runtime.cli_common import JsonOption, err, fail, out, print_json
from runtime.terminal import plain, safe

EXIT = {"allow": 0, "ask": 1, "deny": 2}
_STYLE = {"allow": "green", "ask": "yellow", "deny": "bold red"}


def _context(workspace: Path | None, cwd: Path | None, home: Path | None):  # type: ignore[no-untyped-def]
    from guardian import CheckContext

    ws = (workspace or Path.cwd()).absolute()
    kwargs = {"workspace": ws, "cwd": cwd.absolute() if cwd else None}
    if home is not None:
        kwargs["home"] = home.absolute()
    return CheckContext(**kwargs)


def _batch(path: Path, workspace: Path | None, home: Path | None) -> None:
    from guardian import check

    try:
        lines = path.read_text().splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
        if not all(isinstance(r, dict) and isinstance(r.get("command"), str) for r in rows):
            msg = "every line needs a string field 'command'"
            raise ValueError(msg)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        fail(f"cannot read batch {path}: {e}")
    for row in rows:
        cwd = Path(row["cwd"]) if row.get("cwd") else None
        v = check(row["command"], _context(workspace, cwd, home))
        print_json({"command": row["command"], "decision": v.decision, "rules": v.rules,
                    "reason": v.reason})


def guard(
    command: Annotated[list[str] | None, typer.Argument(help="The command (after --).")] = None,
    json_out: JsonOption = False,
    workspace: Annotated[Path | None, typer.Option("--workspace", help="Task workspace (default: cwd).")] = None,
    cwd: Annotated[Path | None, typer.Option("--cwd", help="Working directory (default: workspace).")] = None,
    home: Annotated[Path | None, typer.Option("--home", help="Home directory used for ~ and $HOME.")] = None,
    batch: Annotated[Path | None, typer.Option("--batch", help="JSONL file of {command, cwd?}.")] = None,
) -> None:
    """Judge a bash command: exit 0 allow, 1 ask, 2 deny."""
    if batch is not None:
        _batch(batch, workspace, home)
        raise typer.Exit(0)
    if not command:
        fail("give a command after --, or --batch FILE")
    from guardian import check

    text = command[0] if len(command) == 1 else " ".join(command)
    v = check(text, _context(workspace, cwd, home))
    if json_out:
        print_json({"command": text, "decision": v.decision, "rules": v.rules, "reason": v.reason,
                    "decoded": v.decoded})
    else:
        out.print(f"[{_STYLE[v.decision]}]{v.decision}[/]  {safe(text)}")
        for h in v.hits:
            out.print(plain(f"  {h.id:<11} {h.decision:<5} {h.kind:<34} {h.reason}"), markup=False)
        if len(v.decoded) > 1:
            err.print(plain("decoded: " + " | ".join(v.decoded[1:6])), markup=False)
    raise typer.Exit(EXIT[v.decision])


def register(app: typer.Typer) -> None:
    """Add `guard` to the main app."""
    app.command("guard")(guard)
