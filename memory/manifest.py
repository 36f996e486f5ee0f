"""MEMORY.md: the one page a person reads, prunes and edits.

Parts: `Manifest` (listed lessons and rules, id -> line, in order),
`read_manifest`, `render_manifest`, `lesson_line`, `rule_line`, and what
reading a person's edit needs: `line_text`, `line_digest`, `is_generated`,
`edited_lesson`, `lesson_text`, `edited_rule`, `split_person_line`, `person_lesson_id`.

A line is `- [ID](lessons/ID.md) — Title: insight (outcome)` or
`- [ID](rules/ID.md) — rule text (confidence 0.40)`. Membership is what
counts: an item whose line is deleted is never retrieved again, and the store
never lists it again. A line whose text a person changed is written back into
the item's file on the next store session (`memory.edits`). Any other line
below "## Lessons" is a person's lesson (`split_person_line`,
`person_lesson_id`), listed by that very line, which is never rewritten;
`render_manifest` keeps every line it does not own where it is.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from pydantic import BaseModel, Field

from tether.memory.files import read_text
from tether.memory.lesson import Lesson
from tether.memory.rule import Rule
from tether.memory.text import normalize

_LINE = re.compile(r"^\s*[-*]\s*\[(?P<id>[^\]]+)\]\((?P<kind>lessons|rules)/[^)]*\)")
_BROKEN = re.compile(r"(?:lessons|rules)/[\w.-]*\.md|^\s*[-*]?\s*\[?(?:L|P|rule)-[0-9a-f]{6,}")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
_OUTCOME = re.compile(r"\s*\((?:success|failure|person)\)\s*$")
_CONFIDENCE = re.compile(r"\s*\(confidence [^)]*\)\s*$")
HEADER = """# Memory

One line per live lesson and rule; the agent is given only what is listed here.
This file is yours: the store keeps every line it cannot read, and never
rewrites your text.

- Add a line below "## Lessons" (`Title: insight`, or just the insight; at the
  end of the file is fine) to teach the agent something: at the next run (or
  `tether memory` command) it becomes a lesson written by a person, recalled
  and ranked like any other; your line stays as you typed it. Rules are
  learnt from repeated errors, so a line you add under "Rules" is a lesson too.
- Delete a line to make the agent forget that item: it is never retrieved or
  listed again (an empty list forgets all; a missing file lists every live item
  anew).
- Edit a line's text to change what the agent reads. A lesson line reads
  `Title: insight (outcome)`, a rule line `rule (confidence)`. Your text
  becomes the lesson's title and Insight (its Revision history records "edited
  by a person in MEMORY.md") or the rule's text, and is indexed for search.
  The outcome and confidence are not editable.
- A lesson you wrote or edited is pinned: automatic revision only proposes
  changes to it. `tether memory proposals` lists them; `tether memory accept`
  or `reject` decides.

`tether memory forget --run ID` removes a run and all that was learnt from it.
"""
OLD_HEADERS = ("""# Memory

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
""",)
"""Headers earlier versions wrote; the next write replaces one with HEADER (a person's own header is kept)."""
SECTIONS = {"lessons": "## Lessons", "rules": "## Rules"}


class Manifest(BaseModel):
    """Items listed in MEMORY.md (id -> line), in file order, and the file's own lines."""

    exists: bool = False
    lessons: dict[str, str] = Field(default_factory=dict)
    rules: dict[str, str] = Field(default_factory=dict)
    raw: list[str] = Field(default_factory=list)
    """Every line of the file as read: `render_manifest` keeps each line that is not an item's."""
    added: list[tuple[int, str]] = Field(default_factory=list)
    """(line number, text) of lines a person added under "Lessons" or "Rules" (rules are learnt from
    errors, so a line added there is a lesson too): each is a person lesson, its line kept verbatim."""
    person: dict[str, int] = Field(default_factory=dict)
    """Person lesson id -> the line number of the line that lists it (`lessons` maps the id to that line)."""
    unreadable: list[tuple[int, str, str]] = Field(default_factory=list)
    """(line number, line, why) of lines kept in place but not read."""


def _section(line: str) -> str | None:
    title = line.strip().lstrip("#").strip().lower()
    return title if title in SECTIONS else None


def read_manifest(path: Path) -> Manifest:
    """Parse MEMORY.md; a missing file lists nothing (exists=False)."""
    if not path.is_file():
        return Manifest()
    out = Manifest(exists=True, raw=read_text(path).splitlines())
    # A MEMORY.md a person wrote from scratch, with neither section heading: its lines are lessons.
    sectioned = any(_section(x) for x in out.raw if x.startswith("## "))
    section: str | None = None if sectioned else "lessons"
    comment = fenced = False
    for n, line in enumerate(out.raw):
        stripped = line.strip()
        if stripped.startswith("#"):
            if sectioned and stripped.startswith("## "):
                section = _section(line)
            elif sectioned and not stripped.startswith("###"):
                section = None  # a top heading ends the section; ### keeps it
            continue
        if comment or stripped.startswith("<!--"):
            comment = "-->" not in stripped
            continue
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
        if fenced or stripped.startswith(("```", "~~~", "|", ">")):
            continue  # a code block, table or quote of the person's: kept as it is, not read
        match = _LINE.match(line)
        if match:
            (out.lessons if match["kind"] == "lessons" else out.rules)[match["id"]] = line.strip()
        elif not stripped or section is None:
            continue
        elif not any(c.isalpha() for c in stripped):
            out.unreadable.append((n + 1, stripped, "it has no words to make a lesson of"))
        elif _BROKEN.search(line):
            out.unreadable.append((n + 1, stripped, "it looks like an item's line but its link cannot be read; "
                                                    "write it as `- [ID](lessons/ID.md) — text`"))
        else:
            text = one_line(_BULLET.sub("", stripped, count=1))
            if text:
                out.added.append((n, text))
                pid = person_lesson_id(split_person_line(text)[1])
                if pid not in out.lessons:
                    out.person[pid] = n
                    out.lessons[pid] = stripped
    return out


def split_person_line(text: str) -> tuple[str, str]:
    """(title, insight) of a line a person added: `Title: insight` (a title up to 80 characters), or all insight."""
    if ": " in text:
        head, rest = text.split(": ", 1)
        if rest.strip() and len(head) <= 80:
            return head.strip(), rest.strip()
    return "", text.strip()


def person_lesson_id(insight: str) -> str:
    """The id of a lesson a person wrote: `P-` and a digest of its text (the same line, the same lesson)."""
    return "P-" + hashlib.sha256(normalize(insight).encode()).hexdigest()[:8]


def one_line(text: str, limit: int = 0) -> str:
    """`text` on one line (whitespace collapsed), cut to `limit` characters when limit > 0."""
    text = " ".join(text.split())
    return text if not limit or len(text) <= limit else text[: limit - 1] + "…"


def lesson_line(x: Lesson, limit: bool = False) -> str:
    """The lesson's line; `limit` gives the cut form lines had before they became editable.

    A title that only repeats the insight's start (a person's line without `Title: `) is not shown.
    """
    title, insight = one_line(x.title, 80 if limit else 0), one_line(x.insight, 160 if limit else 0)
    full_title, full_insight = one_line(x.title), one_line(x.insight)
    if full_title == full_insight or full_title.endswith("…") and full_insight.startswith(full_title[:-1]):
        return f"- [{x.id}](lessons/{x.id}.md) — {insight} ({x.source_outcome or 'person'})"
    return f"- [{x.id}](lessons/{x.id}.md) — {title}: {insight} ({x.source_outcome or 'person'})"


def rule_line(r: Rule, limit: bool = False, confidence: float | None = None) -> str:
    """The rule's line, showing `confidence` (the value in force) or else the one saved in its file."""
    value = r.confidence if confidence is None else confidence
    return f"- [{r.id}](rules/{r.id}.md) — {one_line(r.text, 160 if limit else 0)} (confidence {value:.2f})"


def render_manifest(m: Manifest) -> str:
    """MEMORY.md for `m`: the file's own lines kept in place, items' lines refreshed, dropped or added.

    An item line whose id `m` no longer lists is dropped; a listed item the
    file lacks goes after the last item line of its section (a missing section
    is added at the end). Every other line (a person's notes, unreadable lines,
    a changed header) stays where it is.
    """
    if not m.raw:
        lines = [HEADER, SECTIONS["lessons"], "", *m.lessons.values(), "", SECTIONS["rules"], "", *m.rules.values(), ""]
        return "\n".join(lines)
    out: list[str] = []
    emitted: set[tuple[str, str]] = set()
    heading: dict[str, int] = {}
    last: dict[str, int] = {}
    section: str | None = None
    person = {n: pid for pid, n in m.person.items()}
    for n, line in enumerate(m.raw):
        if line.strip().startswith("## "):
            section = _section(line)
            if section is not None:
                heading.setdefault(section, len(out))
        match = _LINE.match(line)
        if n in person:  # a person's line: kept verbatim while its lesson is listed, dropped once forgotten
            if person[n] in m.lessons and ("lessons", person[n]) not in emitted:
                emitted.add(("lessons", person[n]))
                out.append(m.lessons[person[n]])
                last[section or "lessons"] = len(out) - 1
            continue
        if match is None:
            out.append(line)
            continue
        kind, item_id = match["kind"], match["id"]
        listed: dict[str, str] = getattr(m, kind)
        if item_id in listed and (kind, item_id) not in emitted:
            emitted.add((kind, item_id))
            out.append(listed[item_id])
            last[section or kind] = len(out) - 1
    inserts: list[tuple[int, list[str]]] = []
    for kind in ("lessons", "rules"):
        new = [line for item_id, line in getattr(m, kind).items() if (kind, item_id) not in emitted]
        if not new:
            continue
        if kind in last:
            inserts.append((last[kind] + 1, new))
        elif kind in heading:
            at = heading[kind] + 1
            inserts.append((at + 1, new) if at < len(out) and not out[at].strip() else (at, ["", *new]))
        else:
            inserts.append((len(out), ["", SECTIONS[kind], "", *new]))
    for at, lines in sorted(inserts, key=lambda x: -x[0]):
        out[at:at] = lines
    text = "\n".join(out).rstrip("\n") + "\n"
    for old in OLD_HEADERS:
        if text.startswith(old):
            text = HEADER + text[len(old):]
    return text


def line_digest(line: str) -> str:
    """What the store records of a line it wrote, to tell a person's edit from its own text."""
    return hashlib.sha256(line.strip().encode()).hexdigest()[:16]


def is_generated(line: str, item: Lesson | Rule) -> bool:
    """Whether `line` is the store's rendering of the item (current, or the older cut form)."""
    if isinstance(item, Lesson):
        return line.strip() in (lesson_line(item), lesson_line(item, limit=True))
    # The confidence shown changes with time (the value in force): any number is the store's.
    line = _CONFIDENCE.sub("", line.strip())
    return line in (_CONFIDENCE.sub("", rule_line(item)), _CONFIDENCE.sub("", rule_line(item, limit=True)))


def line_text(line: str) -> str:
    """The editable text of a line: what follows the link and its dash."""
    match = _LINE.match(line)
    rest = line[match.end():] if match else line
    return one_line(rest.strip().lstrip("—–-:").strip())


def lesson_text(line: str) -> str:
    """A lesson line's editable text without the outcome in brackets."""
    return _OUTCOME.sub("", line_text(line)).strip()


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
