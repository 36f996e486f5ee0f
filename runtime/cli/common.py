"""Pieces every CLI sub-app shares: the --home option, consoles, config, errors."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from tether.common.errors import TetherError
from tether.runtime.config import TetherConfig, check_home, load_config
from tether.runtime.terminal import safe

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

HomeOption = Annotated[
    Path | None,
    typer.Option("--home", help="Tether home (runs, memory, checkpoints, ledger). Env: TETHER_HOME."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
def complete_run(incomplete: str) -> list[str]:
    """Shell completion of a run id: `last`, then the runs whose id starts with what was typed, newest first."""
    try:
        runs = load_config().runs_dir
        names = sorted((p.name for p in runs.iterdir() if p.is_dir() and p.name.startswith(incomplete)), reverse=True)
    except (TetherError, OSError):
        return []
    return ([LAST] if LAST.startswith(incomplete) else []) + names[:50]


LAST = "last"
RunArg = Annotated[str, typer.Argument(
    help="Run id as `tether runs` lists it: the whole id, a unique prefix of it, or `last` for the newest run.",
    autocompletion=complete_run)]


def config(home: Path | None) -> TetherConfig:
    """Load config or exit 2 with the one-line reason; first finish any hand-back a dead run left undone."""
    try:
        cfg = load_config(home)
        check_home(cfg)
    except TetherError as e:
        fail(str(e))
    from tether.runtime.workspace.handback import settle_lendings

    for note in settle_lendings(cfg.home, cfg.workspace):
        err.print(f"[bold yellow]hand-back:[/] {safe(note)}")
    return cfg


def resolve_run(cfg: TetherConfig, text: str) -> str:
    """The full run id a person typed (whole, a unique prefix, or `last`), or exit 2 naming the fix."""
    from tether.runtime.run_ids import resolve

    with errors_exit(2):
        return resolve(cfg.runs_dir, text)
    raise AssertionError  # errors_exit always exits on an error


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print `error: message` on stderr (controls and markup escaped) and exit with `code`."""
    err.print(f"[bold red]error:[/] {safe(message)}", markup=True)
    raise typer.Exit(code)


@contextmanager
def errors_exit(code: int = 2) -> Iterator[None]:
    """Turn TetherError into a one-line message and a non-zero exit."""
    try:
        yield
    except TetherError as e:
        fail(str(e), code)


def print_json(obj: Any) -> None:
    """One JSON object on stdout."""
    sys.stdout.write(json.dumps(obj, default=str) + "\n")
    sys.stdout.flush()


Register = Callable[[typer.Typer], None]
