"""The rules table of docs/guardian.md, generated from the registry (`rules.all_rules`).

`python -m tether.guardian.rules_doc` prints the table; `--write FILE` replaces
the block between `<!-- rules-table -->` markers in FILE. A test keeps the page
equal to the registry, so a rule added in code cannot be missing from the docs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tether.guardian.alternatives import ALTERNATIVES
from tether.guardian.rules import all_rules

START, END = "<!-- rules-table -->\n", "\n<!-- /rules-table -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def rules_markdown() -> str:
    """One row per rule: id, category, decision, example and reason, what to do instead."""
    lines = ["| id | category | decision | example | instead |", "|---|---|---|---|---|"]
    for r in all_rules():
        lines.append(f"| {r.id} | {r.category} | {r.decision} | `{_cell(r.example)}` — {_cell(r.reason)} | "
                     f"{_cell(ALTERNATIVES.get(r.id, ''))} |")
    return "\n".join(lines)


def rewrite(page: str) -> str:
    """`page` with its rules block replaced by the current table."""
    if START not in page or END not in page:
        msg = "the page has no <!-- rules-table --> block"
        raise ValueError(msg)
    head, rest = page.split(START, 1)
    tail = rest.split(END, 1)[1]
    return f"{head}{START}{rules_markdown()}{END}{tail}"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--write":
        path = Path(sys.argv[2])
        path.write_text(rewrite(path.read_text()))
    else:
        print(rules_markdown())
