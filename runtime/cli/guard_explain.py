"""`tether guard --explain` and `tether guard --rules`: the guardian's reasons, in plain text or JSON.

Both run on the lean `tether guard` path (no typer, rich or pydantic), like the
verdict itself, and print through `runtime.terminal.plain`, so nothing in a
command reaches the terminal raw.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from tether.runtime.cli.guard_fast import EXIT, command_text, context
from tether.runtime.terminal import plain


def _out(lines: list[str]) -> None:
    sys.stdout.write("\n".join(plain(line) for line in lines) + "\n")
    sys.stdout.flush()


def explain(words: list[str], json_out: bool, workspace: Path | None, cwd: Path | None,
            home: Path | None) -> int:
    """Print why the command gets its decision; the decision's exit code (0, 1, 2)."""
    from tether.guardian.explain import explain as run
    from tether.guardian.explain import render

    e = run(command_text(words), context(workspace, cwd, home))
    if json_out:
        sys.stdout.write(json.dumps(dataclasses.asdict(e)) + "\n")
        sys.stdout.flush()
    else:
        _out(render(e))
    return EXIT[e.decision]


def rules(json_out: bool) -> int:
    """List every rule of the registry with its safe alternative; exit 0."""
    from tether.guardian.alternatives import ALTERNATIVES
    from tether.guardian.rules import all_rules

    rows = [{"id": r.id, "category": r.category, "decision": r.decision, "program": r.program,
             "reason": r.reason, "example": r.example, "instead": ALTERNATIVES.get(r.id, "")}
            for r in all_rules()]
    if json_out:
        sys.stdout.write("".join(json.dumps(r) + "\n" for r in rows))
        sys.stdout.flush()
        return 0
    lines = []
    for r in rows:
        lines.append(f"{r['id']:<12} {r['decision']:<5} {r['category']:<24} {r['reason']}")
        lines.append(f"{'':<12} e.g. {r['example']}")
        if r["instead"]:
            lines.append(f"{'':<12} instead: {r['instead']}")
    _out(lines)
    return 0
