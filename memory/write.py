"""Forward pass: the compilation of a run and at most N new lessons from it.

Parts: `compile_run` (one `compile` call; the compiler sees only the task,
the turns and the outcome), `new_lessons` (one `lessons` call with the
revised lessons as exemplars; each candidate must stand on this run, and
near-duplicates of listed lessons are dropped).
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, ConfigDict, ValidationError

from tether.common.errors import TetherError
from tether.memory.grounding import sentences, unsupported_claims
from tether.memory.lesson import Lesson
from tether.memory.llm import Call, ask, parse_json
from tether.memory.prompts import compile_prompt, lessons_prompt
from tether.memory.report import StepResult
from tether.memory.run import RunRecord, trajectory_text
from tether.memory.store import MemoryStore
from tether.memory.text import jaccard, normalize


class _Candidate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    title: str = ""
    insight: str
    applicability: str = ""


def compile_run(model: BaseChatModel, record: RunRecord) -> tuple[str, StepResult, list[Call]]:
    """The compilation text (key decisions or probable causes); empty when the call failed."""
    system, user = compile_prompt(record)
    try:
        text, call = ask(model, "compile", system, user, key=record.run_id)
    except TetherError as e:
        return "", StepResult(step="compile", target=record.run_id, status="error", detail=str(e)), []
    if not text.strip():
        return "", StepResult(step="compile", target=record.run_id, status="rejected", detail="empty answer"), [call]
    return text, StepResult(step="compile", target=record.run_id, status="ok"), [call]


def lesson_id(run_id: str, insight: str) -> str:
    return "L-" + hashlib.sha256(f"{run_id}\n{normalize(insight)}".encode()).hexdigest()[:8]


def _candidates(answer: str) -> tuple[list[_Candidate], str]:
    data = parse_json(answer)
    if data is None or not isinstance(data.get("lessons"), list):
        return [], 'answer is not a JSON object with a "lessons" list'
    out = []
    for item in data["lessons"]:
        try:
            out.append(_Candidate.model_validate(item))
        except ValidationError:
            continue
    return out, ""


def new_lessons(store: MemoryStore, model: BaseChatModel, record: RunRecord, compilation: str,
                exemplars: list[Lesson], now: datetime) -> tuple[list[str], list[StepResult], list[Call]]:
    """Ask for new lessons and write those that hold; returns (ids, steps, calls)."""
    limit = store.config.max_new_lessons
    if limit == 0:
        return [], [], []
    system, user = lessons_prompt(record, compilation, exemplars, limit)
    try:
        answer, call = ask(model, "lessons", system, user, key=record.run_id)
    except TetherError as e:
        return [], [StepResult(step="lessons", target=record.run_id, status="error", detail=str(e))], []
    candidates, unreadable = _candidates(answer)
    if unreadable:
        return [], [StepResult(step="lessons", target=record.run_id, status="rejected", detail=unreadable)], [call]
    source = normalize(trajectory_text(record.goal, record.outcome, record.turns))
    # Exemplars' earlier wordings count too: re-adding a text a revision narrowed would undo it.
    kept_texts = [x.insight for x in exemplars] + [h.before for x in exemplars for h in x.history if h.before]
    steps, written = [], []
    with store.session():
        for cand in candidates[:limit]:
            new_id = lesson_id(record.run_id, cand.insight)
            problem = ""
            invented = unsupported_claims(f"{cand.insight}\n{cand.applicability}", "", source)
            if not cand.insight.strip():
                problem = "empty insight"
            elif sentences(cand.insight) > 3:
                problem = "insight over 3 sentences"
            elif invented:
                problem = "claims not in this run: " + ", ".join(invented)
            else:
                similar = [store.load_lesson(h.id).insight for h in store.search(cand.insight, "lesson", 5)]
                dup = [
                    t for t in [*kept_texts, *similar] if jaccard(t, cand.insight) >= store.config.duplicate_threshold
                ]
                if dup:
                    problem = f"near-duplicate of an existing lesson: {dup[0][:80]!r}"
            if problem:
                steps.append(StepResult(step="lessons", target=new_id, status="rejected", detail=problem))
                continue
            lesson = Lesson(
                id=new_id, title=cand.title.strip() or cand.insight.strip()[:60], source_run=record.run_id,
                source_outcome=record.outcome, source_goal=record.goal, created=now, project=record.project,
                insight=cand.insight.strip(), applicability=cand.applicability.strip(),
            )
            store.save_lesson(lesson, new=True)
            written.append(new_id)
            kept_texts.append(lesson.insight)
            steps.append(StepResult(step="lessons", target=new_id, status="ok"))
    return written, steps, [call]
