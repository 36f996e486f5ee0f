"""MEMORY.md: the one page a person reads, prunes and edits.

Parts: `Manifest` (listed lessons and rules, id -> line, in order),
`read_manifest`, `render_manifest`, `lesson_line`, `rule_line`, and what
reading a person's edit needs: `line_text`, `line_digest`, `is_generated`,
`edited_lesson`, `edited_rule`.

A line is `- [ID](lessons/ID.md) — Title: insight (outcome)` or
`- [ID](rules/ID.md) — rule text (confidence 0.40)`. Membership is what
counts: an item whose line is deleted is never retrieved again, and the store
never lists it again. A line whose text a person changed is written back into
the item's file on the next store session (`memory.edits`).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from pydantic import BaseModel, Field

from tether.memory.files import read_text
from tether.memory.lesson import Lesson
from tether.memory.rule import Rule

_LINE = re.compile(r"^\s*[-*]\s*\[(?P<id>[^\]]+)\]\((?P<kind>lessons|rules)/[^)]*\)")
_OUTCOME = re.compile(r"\s*\((?:success|failure)\)\s*$")
_CONFIDENCE = re.compile(r"\s*\(confidence [^)]*\)\s*$")
HEADER = """# Memory

One line per live lesson and rule; the agent is given only what is listed here.

- Delete a line to make the agent forget that item: it is never retrieved or
  listed again (an empty list forgets all; a missing file lists every live item
  anew).
- Edit a line's text to change what the agent reads. A lesson line reads
  `Title: insight (outcome)`, a rule line `rule (confidence)`. At the start of
  the next run (or `tether memory` command) your text becomes the lesson's
  title and Insight (its Revision history records "edited by a person in
  MEMORY.md") or the rule's text, and is indexed for search. The outcome and confidence are not editable. A later
  automatic revision of the lesson may rewrite your text; its history keeps it.

`tether memory forget --run ID` removes a run and all that was learnt from it.
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


def one_line(text: str, limit: int = 0) -> str:
    """`text` on one line (whitespace collapsed), cut to `limit` characters when limit > 0."""
    text = " ".join(text.split())
    return text if not limit or len(text) <= limit else text[: limit - 1] + "…"


def lesson_line(x: Lesson, limit: bool = False) -> str:
    """The lesson's line; `limit` gives the cut form lines had before they became editable."""
    title, insight = one_line(x.title, 80 if limit else 0), one_line(x.insight, 160 if limit else 0)
    return f"- [{x.id}](lessons/{x.id}.md) — {title}: {insight} ({x.source_outcome})"


def rule_line(r: Rule, limit: bool = False) -> str:
    return f"- [{r.id}](rules/{r.id}.md) — {one_line(r.text, 160 if limit else 0)} (confidence {r.confidence:.2f})"


def render_manifest(m: Manifest) -> str:
    lines = [HEADER, "## Lessons", "", *m.lessons.values(), "", "## Rules", "", *m.rules.values(), ""]
    return "\n".join(lines)


def line_digest(line: str) -> str:
    """What the store records of a line it wrote, to tell a person's edit from its own text."""
    return hashlib.sha256(line.strip().encode()).hexdigest()[:16]


def is_generated(line: str, item: Lesson | Rule) -> bool:
    """Whether `line` is the store's rendering of the item (current, or the older cut form)."""
    if isinstance(item, Lesson):
        return line.strip() in (lesson_line(item), lesson_line(item, limit=True))
    return line.strip() in (rule_line(item), rule_line(item, limit=True))


def line_text(line: str) -> str:
    """The editable text of a line: what follows the link and its dash."""
    match = _LINE.match(line)
    rest = line[match.end():] if match else line
    return one_line(rest.strip().lstrip("—–-:").strip())


def edited_lesson(line: str, x: Lesson) -> tuple[str, str]:
    """(title, insight) a person's line gives the lesson; the outcome in brackets is not editable.

    `Title: insight` sets both; text without `: ` is all insight (title kept).
    """
    text = _OUTCOME.sub("", line_text(line)).strip()
    title = one_line(x.title)
    if text.startswith(f"{title}:"):
        return title, text[len(title) + 1 :].strip()
    if ": " in text:
        head, insight = text.split(": ", 1)
        return head.strip() or title, insight.strip()
    return title, text


def edited_rule(line: str) -> str:
    """The rule text a person's line gives; the confidence in brackets is not editable."""
    return _CONFIDENCE.sub("", line_text(line)).strip()
