"""A lesson and its revision history, and their markdown form (lessons/<id>.md).

Parts: `Revision` (one verdict, accepted or rejected, with quoted evidence),
`Lesson`, `lesson_to_markdown`, `lesson_from_markdown`, `compact_history` and
`archive_markdown` (lessons/history/<id>.md). The history is kept in the
markdown as one bullet per verdict whose sub-bullets hold JSON-quoted values,
so it reads well and parses back exactly. Past `memory.history_keep` entries
the oldest move, in the same form, to the lesson's archive file, and the
lesson keeps a line naming it.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tether.common.projectid import portable_project
from tether.memory.errors import MemoryStoreError
from tether.memory.files import join_front_matter, render_sections, sections, split_front_matter
from tether.memory.run import Outcome

Verdict = Literal["confirmed", "too_general", "outdated"]
EDITED = "edited"
"""The verdict of a person's edit of the lesson's MEMORY.md line."""
PERSON_EDIT = "edited by a person in MEMORY.md"
LessonStatus = Literal["live", "retired"]
RETIRED = "retired: outdated, no replacement text"
"""Reason of the accepted `outdated` verdict that retired a lesson (forgetting its run revives it)."""
SUPERSEDED = "superseded: outdated, the replaced text is kept in `before`"
"""Reason of the accepted `outdated` verdict that replaced a lesson's text."""
MOUNT = "/memory"
"""Where the memory folder is mounted read-only inside the sandbox."""


class Revision(BaseModel):
    """One ReHarness verdict on a lesson; rejected ones are kept too."""

    model_config = ConfigDict(extra="forbid")

    at: datetime
    run_id: str
    """The run whose outcome tested the lesson (empty for a forget note or a person's edit)."""
    verdict: Verdict | Literal["edited", "merged"] | None = None
    """None when the model's answer could not be read; "edited" for a person's edit; "merged" when a revision made
    the lesson say what another said (memory.merge; the reason names the other)."""
    status: Literal["accepted", "rejected", "reverted", "proposed"]
    """`proposed`: the lesson is pinned (a person's text), so the verdict waits for `tether memory accept`."""
    evidence: list[str] = Field(default_factory=list)
    """Quotes from the SOURCE run the model gave for the verdict."""
    reason: str = ""
    """Why it was rejected (or what happened)."""
    before: str = ""
    """Insight before an accepted revision (lets `forget` undo it)."""
    before_applicability: str = ""
    proposed: str = ""
    """The rewritten insight the model proposed."""
    proposed_applicability: str = ""
    """The applicability a pending proposal would set."""


class Lesson(BaseModel):
    """A short insight linked to the run that taught it."""

    model_config = ConfigDict(extra="forbid")

    id: str
    title: str
    source_run: str
    """The run that taught it; empty for a lesson a person wrote."""
    source_outcome: Outcome | None = None
    """None for a lesson a person wrote."""
    author: Literal["agent", "person"] = "agent"
    """`person`: added as a line of MEMORY.md; it has no source run, and is pinned."""
    source_goal: str = ""
    status: LessonStatus = "live"
    created: datetime
    revised: datetime | None = None
    revision_count: int = 0
    insight: str
    applicability: str = ""
    project: str = ""
    """The project the source run worked on (git remote, or `local:<folder>-<digest>`); empty = unknown."""
    history: list[Revision] = Field(default_factory=list)
    history_archived: int = 0
    """Oldest history entries moved to lessons/history/<id>.md (`memory.history_keep`); the counts below carry
    what they said, so confirmations, pinning and uses read the same as before the move."""
    archived_confirmations: int = 0
    archived_pinned: bool = False
    archived_uses: int = 0

    @property
    def confirmations(self) -> int:
        """Accepted `confirmed` verdicts since the text last changed by `outdated` or a person's edit.

        Derived from the history, so forgetting a run lowers it again; recall ranks by it.
        """
        count = self.archived_confirmations
        for h in self.history:
            if h.status != "accepted":
                continue
            if h.verdict == "confirmed":
                count += 1
            elif h.verdict in ("outdated", EDITED):
                count = 0
        return count

    @property
    def pinned(self) -> bool:
        """Whether the text is a person's: written by one, or last changed by a person's edit.

        Automatic revision only proposes changes to a pinned lesson (see `memory.revise`);
        accepting a proposal that rewrites the text makes the text the model's again.
        """
        pinned = self.archived_pinned if self.history_archived else self.author == "person"
        for h in self.history:
            if h.status == "accepted" and h.verdict == EDITED:
                pinned = True
            elif h.status == "accepted" and h.verdict in ("too_general", "outdated"):
                pinned = False
        return pinned

    @property
    def pending(self) -> list[Revision]:
        """Proposals waiting for a person's decision, oldest first."""
        return [h for h in self.history if h.status == "proposed"]

    @property
    def uses(self) -> int:
        """Runs that relied on the lesson (every revise call, accepted or rejected)."""
        return self.archived_uses + len({h.run_id for h in self.history if h.run_id})

    def links(self, base: str = "..") -> tuple[str, str]:
        """(compilation, trajectory) of the source run, relative to `base`."""
        return f"{base}/runs/{self.source_run}/compilation.md", f"{base}/runs/{self.source_run}/trajectory.md"

    def index_text(self) -> str:
        """What retrieval matches a goal against."""
        return f"{self.title}\n{self.insight}\n{self.applicability}\n{self.source_goal}"


HISTORY_DIR = "history"
"""Beside the lessons: lessons/history/<id>.md holds a lesson's archived (oldest) history entries."""


def compact_history(lesson: Lesson, keep: int) -> tuple[Lesson, list[Revision]]:
    """(the lesson with at most `keep` history entries, the oldest entries moved out); pending proposals stay.

    The moved entries' effect is carried in the lesson's `archived_*` counts.
    """
    movable = [h for h in lesson.history if h.status != "proposed"]
    extra = len(lesson.history) - keep
    if keep <= 0 or extra <= 0 or not movable:
        return lesson, []
    moved_ids = {id(h) for h in movable[:extra]}
    moved = [h for h in lesson.history if id(h) in moved_ids]
    kept = [h for h in lesson.history if id(h) not in moved_ids]
    upto = lesson.model_copy(update={"history": moved})
    update = {"history": kept, "history_archived": lesson.history_archived + len(moved),
              "archived_confirmations": upto.confirmations, "archived_pinned": upto.pinned,
              "archived_uses": upto.uses}
    return lesson.model_copy(update=update), moved


def archive_markdown(lesson_id: str, old: str, moved: list[Revision]) -> str:
    """lessons/history/<id>.md with `moved` appended (oldest first) to the entries it held (`old`)."""
    where = f"{HISTORY_DIR}/{lesson_id}.md"
    entries = [*_parse_history(old, where), *moved]
    return (f"# Archived revision history of {lesson_id}\n\nOldest entries first; the newer ones are in "
            f"[../{lesson_id}.md](../{lesson_id}.md).\n\n{_history_md(entries)}\n")


def archived_history(text: str, where: Path | str) -> list[Revision]:
    """The entries of a lessons/history/<id>.md file."""
    return _parse_history(text, where)


_FIELDS = ("verdict", "status", "evidence", "reason", "before", "before_applicability", "proposed",
           "proposed_applicability")


def _history_md(history: list[Revision]) -> str:
    lines = []
    for r in history:
        verdict = r.verdict or "unreadable"
        run = f"run `{r.run_id}`" if r.run_id else "no run"
        lines.append(f"- {r.at.isoformat()} · {run} · {verdict} · {r.status}")
        for quote in r.evidence:
            lines.append(f"  - evidence: {json.dumps(quote, ensure_ascii=False)}")
        for key in ("reason", "before", "before_applicability", "proposed", "proposed_applicability"):
            value = getattr(r, key)
            if value:
                lines.append(f"  - {key}: {json.dumps(value, ensure_ascii=False)}")
    return "\n".join(lines) if lines else "(none yet)"


def _archived_line(lesson: Lesson) -> str:
    if not lesson.history_archived:
        return ""
    where = f"{HISTORY_DIR}/{lesson.id}.md"
    return f"({lesson.history_archived} older entries are in [{where}]({where}); git keeps every version)\n"


def _parse_history(text: str, where: Path | str) -> list[Revision]:
    out: list[dict] = []
    for line in text.splitlines():
        if line.startswith("- "):
            at, run, verdict, status = (p.strip() for p in line[2:].split(" · "))
            out.append(
                {
                    "at": at,
                    "run_id": "" if run == "no run" else run.removeprefix("run ").strip("`"),
                    "status": status,
                    "verdict": None if verdict == "unreadable" else verdict,
                    "evidence": [],
                }
            )
        elif line.startswith("  - ") and out and ": " in line:
            key, value = line[4:].split(": ", 1)
            if key not in _FIELDS:
                continue
            value = json.loads(value)
            if key == "evidence":
                out[-1]["evidence"].append(value)
            else:
                out[-1][key] = value
    try:
        return [Revision.model_validate(r) for r in out]
    except ValidationError as e:
        msg = f"{where}: unreadable Revision history entry ({e.errors()[0]['msg']})"
        raise MemoryStoreError(msg) from e


def lesson_to_markdown(lesson: Lesson) -> str:
    """Render lessons/<id>.md: front matter, Insight, Applicability, Source episode, history."""
    meta = lesson.model_dump(mode="json", exclude={"insight", "applicability", "history"})
    compilation, trajectory = lesson.links()
    episode = (
        f"written by a person in MEMORY.md on {lesson.created.date().isoformat()}; no source run"
    ) if not lesson.source_run else (
        f"{lesson.source_run} ({lesson.source_outcome})\n"
        f"- Task: {lesson.source_goal.splitlines()[0] if lesson.source_goal else ''}\n"
        f"- Compilation: [{compilation}]({compilation}) (in the sandbox: "
        f"{MOUNT}/runs/{lesson.source_run}/compilation.md)\n"
        f"- Raw trajectory: [{trajectory}]({trajectory}) (in the sandbox: "
        f"{MOUNT}/runs/{lesson.source_run}/trajectory.md)"
    )
    body = render_sections(lesson.title, [
        ("Insight", lesson.insight),
        ("Applicability", lesson.applicability),
        ("Source episode", episode),
        ("Revision history", _archived_line(lesson) + _history_md(lesson.history)),
    ])
    return join_front_matter(meta, body)


def lesson_from_markdown(text: str, where: Path | str = "<lesson>") -> Lesson:
    """Parse lessons/<id>.md back; a person may have edited the Insight or Applicability."""
    meta, body = split_front_matter(text, where)
    parts = sections(body)
    try:
        return Lesson.model_validate({
            **meta,
            "project": portable_project(str(meta.get("project") or "")),
            "insight": parts.get("Insight", ""),
            "applicability": parts.get("Applicability", ""),
            "history": _parse_history(parts.get("Revision history", ""), where),
        })
    except (ValidationError, ValueError) as e:
        detail = (
            e.errors()[0]["msg"] if isinstance(e, ValidationError) else (str(e).splitlines() or [type(e).__name__])[0]
        )
        msg = f"{where}: not a valid lesson ({detail}); fix the front matter or delete the file"
        raise MemoryStoreError(msg) from e
