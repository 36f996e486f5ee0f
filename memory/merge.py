"""Revised lessons checked against each other: a revision that makes two lessons say the same is one lesson.

Parts: `same_text` (equal or near-equal insights), `derived_title` (a title
re-derived from a rewritten insight), `near_duplicates`, `merge_duplicates`
(after a revision: the near-equal live lessons are merged into the oldest),
`merge_all` (every such group at once: `tether gc` on a home made before
merging existed).

Near-equal is a word-set overlap (Jaccard) of the normalised insights at or
above `memory.merge_threshold`, on plain words: negations and small words
count, so "use X" and "do not use X" are never one lesson. The oldest lesson
(by creation, then id) stays live with a `merged` entry naming the other;
the other is retired with a `merged into L-x` entry, its file and history
kept (lessons/<id>.md). A pinned lesson (a person's text, `Lesson.pinned`)
is never merged automatically: the pair is reported and left as it is.
"""

from __future__ import annotations

import re
from datetime import datetime

from tether.memory.errors import MemoryStoreError, UnknownMemoryItemError
from tether.memory.lesson import Lesson, Revision
from tether.memory.store import MemoryStore
from tether.memory.text import normalize

TITLE_CHARS = 60
_WORDS = re.compile(r"\w+")
MERGED = "merged into"


def _words(text: str) -> set[str]:
    return set(_WORDS.findall(normalize(text)))


def same_text(a: str, b: str, threshold: float) -> bool:
    """Whether two insights are equal or near-equal (plain-word Jaccard >= threshold)."""
    wa, wb = _words(a), _words(b)
    if not wa or not wb:
        return normalize(a) == normalize(b)
    return len(wa & wb) / len(wa | wb) >= threshold


def derived_title(insight: str) -> str:
    """A title from the insight: all of it when short, else its start (first sentence, cut at a word) and "…".

    Either way it repeats the insight's start, so MEMORY.md shows the line without it (`manifest.lesson_line`).
    """
    text = " ".join(insight.split())
    if len(text) <= TITLE_CHARS:
        return text
    first = re.split(r"(?<=[.!?;])\s", text, maxsplit=1)[0].rstrip(".;!?")
    if len(first) >= TITLE_CHARS:
        first = first[:TITLE_CHARS].rsplit(" ", 1)[0]
    return f"{first}…"


def near_duplicates(store: MemoryStore, lesson: Lesson) -> list[Lesson]:
    """The live lessons whose insight is equal or near-equal to `lesson`'s (itself not included).

    Candidates are the index's nearest lessons to the text, so the check costs one search, not a scan.
    Call inside a session.
    """
    if lesson.status != "live":
        return []
    found = []
    for hit in store.search(lesson.insight, "lesson", store.config.top_k):
        if hit.id == lesson.id:
            continue
        try:
            other = store.load_lesson(hit.id)
        except (MemoryStoreError, UnknownMemoryItemError):  # broken or vanished: no duplicate (lessons() names it)
            continue
        if other.status == "live" and same_text(other.insight, lesson.insight, store.config.merge_threshold):
            found.append(other)
    return found


def merge_duplicates(store: MemoryStore, lesson: Lesson, run_id: str, now: datetime,
                     why: str = "same text as that lesson after a revision") -> tuple[list[str], list[str]]:
    """Merge the live lessons near-equal to `lesson` into the oldest; (retired ids, pinned ids left alone).

    Runs inside the caller's `store.session()`; `why` goes into the merged lessons' history entries.
    """
    found = [lesson, *near_duplicates(store, lesson)]
    if len(found) == 1:
        return [], []
    pinned = [x.id for x in found if x.pinned]
    if pinned:
        return [], pinned
    survivor, *rest = sorted(found, key=lambda x: (x.created, x.id))
    for x in rest:
        entry = Revision(at=now, run_id=run_id, verdict="merged", status="accepted", before=x.insight,
                         before_applicability=x.applicability, reason=f"{MERGED} {survivor.id} ({why})")
        store.save_lesson(x.model_copy(update={"status": "retired", "history": [*x.history, entry]}))
    ids = ", ".join(x.id for x in rest)
    kept = Revision(at=now, run_id=run_id, verdict="merged", status="accepted", before=survivor.insight,
                    before_applicability=survivor.applicability,
                    reason=f"merged {ids} into this lesson (their histories stay in their files)")
    store.save_lesson(survivor.model_copy(update={"history": [*survivor.history, kept]}))
    return [x.id for x in rest], []


def merge_all(store: MemoryStore, now: datetime, *, dry_run: bool = False) -> tuple[dict[str, str], list[list[str]]]:
    """Merge every group of near-equal live lessons, as a revision would (`tether gc`, for homes made before).

    Returns (retired id -> the id it was merged into, groups left alone because a person's lesson is
    among them). With `dry_run` nothing is written; the result says what would be merged.
    """
    merged: dict[str, str] = {}
    left: list[list[str]] = []
    with store.session():
        for lesson in sorted(store.lessons(), key=lambda x: (x.created, x.id)):
            if lesson.status != "live" or lesson.id in merged:
                continue
            group = [lesson, *(x for x in near_duplicates(store, lesson) if x.id not in merged)]
            if len(group) == 1:
                continue
            if any(x.pinned for x in group):
                ids = sorted(x.id for x in group)
                if ids not in left:
                    left.append(ids)
                continue
            survivor = min(group, key=lambda x: (x.created, x.id))
            if dry_run:
                merged |= {x.id: survivor.id for x in group if x is not survivor}
                continue
            retired, _ = merge_duplicates(store, lesson, "", now, why="near-equal text, found by `tether gc`")
            merged |= dict.fromkeys(retired, survivor.id)
    return merged, left
