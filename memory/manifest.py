"""MEMORY.md: the one page a person reads and prunes.

Parts: `Manifest` (listed lessons and rules, id -> line, in order),
`read_manifest`, `render_manifest`, `lesson_line`, `rule_line`.

A line is `- [ID](lessons/ID.md) — text`. Membership is what counts: an item
whose line is deleted is never retrieved again, and the store never lists it
again. The text after the dash is regenerated from the lesson or rule file
whenever that item is written; to change what the agent reads, edit
lessons/ID.md or rules/ID.md.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, Field

from memory.files import read_text
from memory.lesson import Lesson
from memory.rule import Rule

_LINE = re.compile(r"^\s*[-*]\s*\[(?P<id>[^\]]+)\]\((?P<kind>lessons|rules)/[^)]*\)")
HEADER = """# Memory

One line per live lesson and rule. Delete a line to make the agent forget that
item: it is never retrieved or listed again (an empty list forgets all; a
missing file lists every live item anew). `tether memory forget --run ID`
removes a run and all that was learnt from it. The text after the dash is
regenerated: to change what the agent reads, edit the file the line links to.
"""


class Manifest(BaseModel):
    """Items listed in MEMORY.md (id -> line), in file order."""

    exists: bool = False
    lessons: dict[str, str] = Field(default_factory=dict)
    rules: dict[str, str] = Field(default_factory=dict)


def read_manifest(path: Path) -> Manifest:
    """Parse MEMORY.md; a missing file lists nothing (exists=False)."""
    if not path.is_file():
        return Manifest()
    out = Manifest(exists=True)
    for line in read_text(path).splitlines():
        match = _LINE.match(line)
        if match:
            (out.lessons if match["kind"] == "lessons" else out.rules)[match["id"]] = line.strip()
    return out


def _one_line(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def lesson_line(x: Lesson) -> str:
    return f"- [{x.id}](lessons/{x.id}.md) — {_one_line(x.title, 80)}: {_one_line(x.insight)} ({x.source_outcome})"


def rule_line(r: Rule) -> str:
    return f"- [{r.id}](rules/{r.id}.md) — {_one_line(r.text)} (confidence {r.confidence:.2f})"


def render_manifest(m: Manifest) -> str:
    lines = [HEADER, "## Lessons", "", *m.lessons.values(), "", "## Rules", "", *m.rules.values(), ""]
    return "\n".join(lines)
