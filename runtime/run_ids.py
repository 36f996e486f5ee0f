"""Run ids: their syntax, the folder each names, and what a person may type for one.

A run id is a plain name (`20261201-043917-5b1527`), never a path. People may
type a unique prefix of one, or `last` for the newest run; `resolve` turns
that into the full id, and every command that takes a run id goes through it.
"""

from __future__ import annotations

import re
from pathlib import Path

from tether.common.errors import ConfigError

RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
LAST = "last"


class UnknownRunError(ConfigError, LookupError):
    """No run (or no unique run) answers to this id, or it is not a valid id."""


def check_run_id(run_id: str) -> str:
    """`run_id` unchanged when it is a plain name; UnknownRunError for a path or odd characters."""
    if not RUN_ID.fullmatch(run_id) or ".." in run_id:
        msg = (f"invalid run id {run_id!r}: a run id is a name like 20260101-120000-a1b2c3 "
               "(no '/', no '..'); list runs with `tether runs`")
        raise UnknownRunError(msg)
    return run_id


def run_dir(runs_dir: Path, run_id: str) -> Path:
    """The folder of `run_id` (checked to be a name, so it cannot leave `runs_dir`)."""
    return runs_dir / check_run_id(run_id)


def resolve(runs_dir: Path, text: str) -> str:
    """The full run id that `text` names: itself, `last`, or a unique prefix.

    Raises:
        UnknownRunError: no run, an ambiguous prefix (the candidates are named), or an invalid id.
    """
    if text == LAST:
        runs = sorted(p.name for p in _runs(runs_dir))
        if not runs:
            msg = f"no runs yet under {runs_dir}; start one with `tether run`"
            raise UnknownRunError(msg)
        return runs[-1]
    check_run_id(text)
    if (runs_dir / text).is_dir():
        return text
    found = sorted(p.name for p in _runs(runs_dir) if p.name.startswith(text))
    if len(found) == 1:
        return found[0]
    if not found:
        msg = f"no run '{text}' under {runs_dir}; list runs with `tether runs`"
        raise UnknownRunError(msg)
    shown = ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
    msg = f"run id prefix '{text}' is ambiguous ({shown}); type more of it"
    raise UnknownRunError(msg)


def _runs(runs_dir: Path) -> list[Path]:
    if not runs_dir.is_dir():
        return []
    return [p for p in runs_dir.iterdir() if p.is_dir() and not p.is_symlink() and RUN_ID.fullmatch(p.name)]
