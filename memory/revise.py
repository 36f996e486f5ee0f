"""ReHarness backward pass: revise each lesson the run relied on, from its SOURCE run.

Parts: `used_lessons` (which retrieved lessons the run relied on),
`revise_lesson` (one `revise` call, the source-only check, the optional
counterfactual call, and the verdict written into the lesson's history).

A retrieved lesson counts as *used* when the runner lists it in
`RunRecord.lessons_used`, or the run's reasoning, commands or summary cite
its id, or a command read its file or its source run under /memory. Lessons
that were only retrieved are not revised: nothing tested them.
"""

from __future__ import annotations

import re
from datetime import datetime

from langchain_core.language_models import BaseChatModel

from tether.common.errors import TetherError
from tether.memory.errors import UnknownMemoryItemError
from tether.memory.grounding import check_revision, read_revision
from tether.memory.lesson import MOUNT, RETIRED, SUPERSEDED, Lesson, Revision
from tether.memory.llm import Call, ask, parse_json
from tether.memory.merge import derived_title, merge_duplicates
from tether.memory.prompts import counterfactual_prompt, revise_prompt
from tether.memory.report import Recall, StepResult
from tether.memory.run import RunRecord, trajectory_text
from tether.memory.store import MemoryStore


def used_lessons(record: RunRecord, recall: Recall) -> tuple[list[str], list[str]]:
    """(used, unused) ids among the recalled lessons."""
    text = "\n".join([record.summary, *(f"{t.reasoning}\n{t.command}" for t in record.turns)])
    commands = "\n".join(t.command for t in record.turns)
    used, unused = [], []
    for x in recall.lessons:
        cited = x.id in record.lessons_used or re.search(rf"(?<![\w-]){re.escape(x.id)}(?![\w-])", text)
        descended = f"{MOUNT}/runs/{x.source_run}/" in commands or f"{MOUNT}/lessons/{x.id}.md" in commands
        (used if cited or descended else unused).append(x.id)
    return used, unused


def revised_by(lesson: Lesson, run_id: str) -> bool:
    """Whether the lesson's history already holds a verdict from this run (each run revises a lesson once)."""
    return any(h.run_id == run_id for h in lesson.history)


PINNED = "proposed: the lesson's text is a person's (pinned); `tether memory accept` applies it"


def apply_verdict(lesson: Lesson, revision: Revision, new_text: str, applicability: str,
                  retire: bool) -> dict[str, object]:
    """The update an accepted verdict makes to the lesson (fills the revision's `before`).

    `confirmed` keeps the text and adds a confirmation (ranking uses the
    count); `too_general` rewrites the text with the narrower applicability it
    must state; `outdated` with new text supersedes the old text (kept in the
    entry's `before`; confirmations restart), and with no text retires the
    lesson (never recalled again).
    """
    revision.before, revision.before_applicability = lesson.insight, lesson.applicability
    update: dict[str, object] = {"revised": revision.at, "revision_count": lesson.revision_count + 1}
    if revision.verdict != "confirmed" and new_text.strip():
        update |= {"insight": new_text.strip(), "applicability": applicability.strip() or lesson.applicability}
        if new_text.strip() != lesson.insight and lesson.author == "agent":  # a model's title follows its text
            update["title"] = derived_title(new_text)
        if revision.verdict == "outdated":
            revision.reason = "; ".join(p for p in (revision.reason, SUPERSEDED) if p)
    if retire:
        update["status"] = "retired"
        revision.reason = "; ".join(p for p in (revision.reason, RETIRED) if p)
    return update


def _apply(store: MemoryStore, lesson_id: str, revision: Revision, new_text: str, applicability: str,
           retire: bool) -> str:
    """Write the verdict into the lesson as it is NOW on disk (another run may have revised it); what merged.

    An accepted verdict on a pinned lesson (a person's text) is only proposed:
    recorded in the history with the text it would set, applied by `memory.review`.
    A lesson whose accepted revision made it say what another live lesson says is
    merged with it (memory.merge).
    """
    with store.session():
        try:
            lesson = store.load_lesson(lesson_id)
        except UnknownMemoryItemError:
            return ""  # forgotten while we were asking
        if revised_by(lesson, revision.run_id):
            return ""  # this run's verdict is already in (a resumed after-run phase)
        update: dict[str, object] = {}
        if revision.status == "accepted" and lesson.pinned:
            revision.status, revision.reason = "proposed", PINNED
            revision.proposed = new_text.strip() if revision.verdict != "confirmed" else ""
            revision.proposed_applicability = applicability.strip() if revision.proposed else ""
        elif revision.status == "accepted":
            update = apply_verdict(lesson, revision, new_text, applicability, retire)
        update["history"] = [*lesson.history, revision]
        saved = lesson.model_copy(update=update)
        store.save_lesson(saved)
        if revision.status != "accepted":
            return ""
        merged, pinned = merge_duplicates(store, saved, revision.run_id, revision.at)
    if pinned:
        return f"same text as {', '.join(pinned)} (a person's lesson among them: not merged)"
    return f"merged {', '.join(merged)} (same text after the revision)" if merged else ""


def revise_lesson(store: MemoryStore, model: BaseChatModel, lesson_id: str, record: RunRecord,
                  now: datetime) -> tuple[StepResult, list[Call]]:
    """Revise one used lesson; every outcome, rejections included, lands in its history."""
    try:
        lesson: Lesson = store.load_lesson(lesson_id)
        source = store.load_run(lesson.source_run) if lesson.source_run else None
    except UnknownMemoryItemError as e:
        return StepResult(step="revise", target=lesson_id, status="skipped", detail=str(e)), []
    if revised_by(lesson, record.run_id):
        return StepResult(
            step="revise", target=lesson_id, status="skipped", detail=f"already revised by run {record.run_id}"
        ), []
    turns = store.run_turns(source.run_id) if source else []
    system, user = revise_prompt(lesson, source.goal if source else "", source.outcome if source else "", turns,
                                 record)
    try:
        answer, call = ask(model, "revise", system, user, key=lesson_id)
    except TetherError as e:
        return StepResult(step="revise", target=lesson_id, status="error", detail=str(e)), []
    calls = [call]
    proposal, unreadable = read_revision(answer)
    if proposal is None:
        problems, verdict, evidence, proposed = [unreadable], None, [], ""
    else:
        # A person's lesson has no source run: its own text is the only source of facts.
        source_text = trajectory_text(source.goal, source.outcome, turns) if source else \
            f"{lesson.title}\n{lesson.insight}\n{lesson.applicability}"
        problems = check_revision(proposal, lesson.insight, lesson.applicability, source_text)
        verdict, evidence, proposed = proposal.verdict, proposal.evidence, proposal.lesson
    if not problems and proposal is not None and record.outcome == "failure" and proposal.verdict != "confirmed" \
            and store.config.counterfactual and proposal.lesson.strip():
        system, user = counterfactual_prompt(proposal.lesson, proposal.applicability, record)
        try:
            answer, cf_call = ask(model, "counterfactual", system, user, key=lesson_id)
            calls.append(cf_call)
            data = parse_json(answer) or {}
            if data.get("prevents") is not True:
                problems.append(
                    "counterfactual: the revision would not have prevented this failure "
                    f"({data.get('why', 'no answer')})"
                )
        except TetherError as e:
            problems.append(f"counterfactual check failed: {e}")
    status = "rejected" if problems else "accepted"
    if verdict == "confirmed" and not problems:
        proposed = ""  # confirmed keeps the text, whatever the answer's "lesson" says
    revision = Revision(at=now, run_id=record.run_id, verdict=verdict, status=status, evidence=evidence,
                        reason="; ".join(problems), proposed=proposed if problems else "")
    retire = proposal is not None and proposal.verdict == "outdated" and not proposal.lesson.strip()
    merged = _apply(store, lesson_id, revision, proposed if not problems else "",
                    proposal.applicability if proposal and not problems else "", retire and not problems)
    result = "rejected" if problems else "proposed" if revision.status == "proposed" else "ok"
    detail = "; ".join(p for p in (revision.reason, merged) if p)
    return StepResult(step="revise", target=lesson_id, status=result, detail=detail, verdict=verdict), calls
