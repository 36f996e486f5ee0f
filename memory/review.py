"""A person's review of what automatic revision proposed for pinned lessons.

Parts: `list_proposals`, `accept_proposal`, `reject_proposal`.

A lesson is pinned while its text is a person's (written as a MEMORY.md
line, or last changed by a person's edit of its line): ReHarness then records
its verdict as `proposed`, with the text it would set, and changes nothing.
Accepting applies the verdict as if it had just been accepted (`confirmed`
adds a confirmation, `too_general` and `outdated` rewrite the text, an empty
`outdated` retires the lesson); the entry moves to the end of the history,
dated now, its reason naming the run and time of the proposal. A text it
rewrites is the model's again, so the lesson is no longer pinned. Rejecting
marks the entry `rejected` ("declined by a person"). Each proposal is named
by its lesson and the run that made it (a run revises a lesson once).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tether.memory.errors import UnknownMemoryItemError
from tether.memory.lesson import Lesson, Revision
from tether.memory.manifest import lesson_line
from tether.memory.revise import apply_verdict
from tether.memory.store import MemoryStore

DECLINED = "declined by a person"


def proposal_json(x: Lesson, h: Revision) -> dict[str, Any]:
    action = ("keep the text (one more confirmation)" if h.verdict == "confirmed"
              else "retire the lesson" if h.verdict == "outdated" and not h.proposed else "rewrite the text")
    return {"lesson": x.id, "title": x.title, "insight": x.insight, "applicability": x.applicability,
            "run_id": h.run_id, "at": h.at.isoformat(), "verdict": h.verdict, "action": action,
            "proposed": h.proposed, "proposed_applicability": h.proposed_applicability, "evidence": h.evidence}


def list_proposals(store: MemoryStore) -> list[dict[str, Any]]:
    """Every pending proposal, oldest first within each lesson."""
    with store.session():
        lessons = store.lessons()
    return [proposal_json(x, h) for x in lessons if x.status == "live" for h in x.pending]


def _pick(lesson: Lesson, run_id: str | None) -> Revision:
    pending = lesson.pending
    if not pending:
        msg = f"lesson {lesson.id} has no pending proposal; `tether memory proposals` lists them"
        raise UnknownMemoryItemError(msg)
    if run_id is None:
        return pending[-1]
    for h in pending:
        if h.run_id == run_id:
            return h
    runs = ", ".join(h.run_id for h in pending)
    msg = f"lesson {lesson.id} has no pending proposal from run '{run_id}'; pending: {runs}"
    raise UnknownMemoryItemError(msg)


def accept_proposal(store: MemoryStore, lesson_id: str, run_id: str | None, now: datetime) -> dict[str, Any]:
    """Apply one pending proposal (the newest when `run_id` is None)."""
    with store.session():
        lesson = store.load_lesson(lesson_id)
        h = _pick(lesson, run_id)
        done = {"accepted": proposal_json(lesson, h)}
        revision = Revision(at=now, run_id=h.run_id, verdict=h.verdict, status="accepted", evidence=h.evidence,
                            reason=f"proposed by run {h.run_id} on {h.at.isoformat()[:19]}; accepted by a person")
        retire = h.verdict == "outdated" and not h.proposed
        update = apply_verdict(lesson, revision, h.proposed, h.proposed_applicability, retire)
        update["history"] = [e for e in lesson.history if e is not h] + [revision]
        saved = lesson.model_copy(update=update)
        store.save_lesson(saved)
        if saved.status == "live" and saved.insight != lesson.insight and lesson.id in store.manifest().person:
            # the person accepted new text: their line now shows it, in the item form
            store.relist("lessons", lesson.id, lesson_line(saved))
    return done | {"status": saved.status, "insight": saved.insight, "pinned": saved.pinned,
                   "pending": len(saved.pending)}


def reject_proposal(store: MemoryStore, lesson_id: str, run_id: str | None, now: datetime) -> dict[str, Any]:
    """Decline one pending proposal (the newest when `run_id` is None); the lesson is unchanged."""
    with store.session():
        lesson = store.load_lesson(lesson_id)
        h = _pick(lesson, run_id)
        done = {"rejected": proposal_json(lesson, h)}
        declined = h.model_copy(update={"status": "rejected", "reason": f"{DECLINED} on {now.isoformat()[:19]}"})
        saved = lesson.model_copy(update={"history": [declined if e is h else e for e in lesson.history]})
        store.save_lesson(saved)
    return done | {"pending": len(saved.pending)}
