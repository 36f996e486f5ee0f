"""Verdicts that act (issue 13): outdated retires or supersedes, too_general narrows, confirmed ranks."""

from __future__ import annotations

from memory_helpers import T0, learn_desc, record

from tether.memory.config import MemoryConfig
from tether.memory.cycle import MemoryCycle
from tether.memory.forget import forget_run
from tether.memory.grounding import narrows
from tether.memory.lesson import RETIRED, SUPERSEDED, Lesson
from tether.memory.prompts import revise_prompt

ASC_GOAL = "Sort the numbers in values.txt in ascending order"
SOURCE_QUOTE = "sort -rn data.txt > out.txt"


def used_by(lesson_id: str, run_id: str = "run-asc", outcome: str = "failure"):
    return record(
        run_id, ASC_GOAL, outcome, turns=[(f"Per {lesson_id}, largest first.", "sort -rn values.txt > out.txt", 0, "")]
    )


def revise(
    cycle: MemoryCycle, scripted, lesson_id: str, answer: dict, run_id: str = "run-asc", outcome: str = "failure"
):
    model = scripted(compile=["c"], revise=[answer], lessons=[{"lessons": []}])
    return cycle.after_run(used_by(lesson_id, run_id, outcome), model, cycle.read(ASC_GOAL))


def test_outdated_without_text_retires_the_lesson(cycle: MemoryCycle, scripted, clock) -> None:
    lesson_id = learn_desc(cycle, scripted)
    report = revise(cycle, scripted, lesson_id, {"verdict": "outdated", "evidence": [SOURCE_QUOTE], "lesson": ""})
    [step] = [s for s in report.steps if s.step == "revise"]
    assert (step.status, step.verdict) == ("ok", "outdated"), step.detail
    lesson = cycle.store.load_lesson(lesson_id)
    assert lesson.status == "retired"
    assert lesson.insight == "Put the largest numbers first when sorting numbers."  # the text stays, for history
    assert [(h.verdict, h.status, h.reason) for h in lesson.history] == [("outdated", "accepted", RETIRED)]
    assert cycle.read(ASC_GOAL).lesson_ids == []
    assert lesson_id not in cycle.store.manifest_path.read_text()
    # Forgetting the run whose verdict retired it brings it back.
    forget_run(cycle.store, "run-asc", clock())
    assert cycle.store.load_lesson(lesson_id).status == "live"
    assert cycle.read(ASC_GOAL).lesson_ids == [lesson_id]


def test_outdated_with_text_supersedes_and_restarts_confirmations(cycle: MemoryCycle, scripted, clock) -> None:
    lesson_id = learn_desc(cycle, scripted)
    confirmed = {"verdict": "confirmed", "evidence": [SOURCE_QUOTE], "lesson": ""}
    revise(cycle, scripted, lesson_id, confirmed, "run-ok-1", "success")
    clock.advance(hours=1)
    revise(cycle, scripted, lesson_id, confirmed, "run-ok-2", "success")
    assert cycle.store.load_lesson(lesson_id).confirmations == 2
    clock.advance(hours=1)
    new_text = "Put the largest numbers first only when the task says descending; hypothesis, unconfirmed otherwise."
    revise(cycle, scripted, lesson_id, {"verdict": "outdated", "evidence": [SOURCE_QUOTE], "lesson": new_text})
    lesson = cycle.store.load_lesson(lesson_id)
    assert lesson.status == "live" and lesson.insight == new_text
    last = lesson.history[-1]
    assert (last.verdict, last.status, last.reason) == ("outdated", "accepted", SUPERSEDED)
    assert last.before == "Put the largest numbers first when sorting numbers."
    assert lesson.confirmations == 0 and lesson.uses == 3  # the new text has not been confirmed yet


def test_too_general_must_narrow_the_applicability(cycle: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(cycle, scripted)
    narrower = "Put the largest numbers first when the task asks for descending order."
    report = revise(cycle, scripted, lesson_id, {"verdict": "too_general", "evidence": [SOURCE_QUOTE],
                                                 "lesson": narrower, "applicability": "numeric sorting tasks"})
    [step] = [s for s in report.steps if s.step == "revise"]
    assert step.status == "rejected" and "narrower applicability" in step.detail
    assert cycle.store.load_lesson(lesson_id).insight == "Put the largest numbers first when sorting numbers."
    report = revise(
        cycle,
        scripted,
        lesson_id,
        {
            "verdict": "too_general",
            "evidence": [SOURCE_QUOTE],
            "lesson": narrower,
            "applicability": "numeric sorting tasks that ask for descending order",
        },
        "run-asc-2",
    )
    lesson = cycle.store.load_lesson(lesson_id)
    assert (lesson.insight, lesson.applicability) == (narrower, "numeric sorting tasks that ask for descending order")
    assert lesson.history[-1].before_applicability == "numeric sorting tasks"


def test_confirmed_raises_the_count_that_ranking_uses(tmp_path, scripted, clock) -> None:
    cfg = MemoryConfig(rule_trial_rate=0.0, top_k=1, confirm_boost=10.0)
    cycle = MemoryCycle(tmp_path / "m", cfg, clock=clock)
    pair = {"lessons": [
        {"title": "Check the order", "insight": "Check the sort order the task asks for before sorting numbers."},
        {"title": "Keep a backup", "insight": "Keep a backup copy of the numbers file."},
    ]}
    run = record(
        "run-src", "Sort numbers in a file", turns=[("check the sort order the task asks for", "cp f f.bak", 0, "")]
    )
    better, backup = cycle.after_run(run, scripted(compile=["c"], lessons=[pair])).new_lessons
    goal = "sort the numbers in the order the task asks for"
    assert cycle.read(goal).lesson_ids == [better]
    model = scripted(compile=["c"], revise=[{"verdict": "confirmed", "evidence": ["cp f f.bak"], "lesson": ""}],
                     lessons=[{"lessons": []}])
    cycle.after_run(record("run-use", goal, turns=[(f"per {backup}", "cp g g.bak", 0, "")]), model,
                    _recall_with(cycle, goal, backup))
    assert cycle.store.load_lesson(backup).confirmations == 1
    recall = cycle.read(goal)
    assert recall.lesson_ids == [backup] and recall.lessons[0].confirmations == 1
    plain = MemoryCycle(tmp_path / "m", cfg.model_copy(update={"confirm_boost": 0.0}), clock=clock)
    assert plain.read(goal).lesson_ids == [better]  # without the boost the confirmation would not count


def _recall_with(cycle: MemoryCycle, goal: str, lesson_id: str):
    """A recall that offered `lesson_id` (top_k=1 offers only the best match)."""
    from tether.memory.report import Recall, RecalledLesson

    x = cycle.store.load_lesson(lesson_id)
    return Recall(goal=goal, lessons=[RecalledLesson(id=x.id, title=x.title, insight=x.insight, applicability="",
                                                     source_run=x.source_run, source_outcome=x.source_outcome)])


def test_descent_rules_say_check_before_the_first_action(cycle: MemoryCycle, scripted) -> None:
    learn_desc(cycle, scripted)
    prompt = cycle.read(ASC_GOAL).prompt()
    assert "before your first action for the lessons you will rely on" in prompt
    assert "again" in prompt and "whenever an action fails" in prompt
    bare = cycle.read(ASC_GOAL, sources=False).prompt()  # the lessons-only control: no sources, no descent
    assert "Put the largest numbers first" in bare and "/memory" not in bare and "first action" not in bare


def test_the_revise_prompt_says_what_each_verdict_does() -> None:
    lesson = Lesson(id="L-1", title="t", source_run="r", source_outcome="success", created=T0,
                    insight="Put the largest numbers first.", applicability="numeric sorting tasks")
    system, _ = revise_prompt(lesson, "goal", "success", [], record("run-x", ASC_GOAL))
    for words in ("text is KEPT", "RETIRE the lesson", "NARROWER", "keep every word of the current applicability",
                  '"(hypothesis, unconfirmed)"'):
        assert words in system


def test_too_general_must_restrict_the_old_applicability(cycle: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(cycle, scripted)
    narrower = "Put the largest numbers first when the task asks for descending order."
    answer = {"verdict": "too_general", "evidence": [SOURCE_QUOTE], "lesson": narrower,
              "applicability": "descending sorts"}  # different, but not a restriction: "numeric" and "tasks" dropped
    report = revise(cycle, scripted, lesson_id, answer)
    [step] = [s for s in report.steps if s.step == "revise"]
    assert step.status == "rejected" and "it drops numeric, task" in step.detail, step.detail
    assert narrows("numeric sorting tasks in descending order", "numeric sorting tasks") == (True, [])
    assert narrows("anything at all", "")[0] and not narrows("numeric sorting tasks", "numeric sorting tasks")[0]


def test_a_sentence_the_source_lacks_must_be_marked_hypothesis(cycle: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(cycle, scripted)
    guess = "Spreadsheet merges behave likewise whenever columns carry currency totals."
    answer = {"verdict": "outdated", "evidence": [SOURCE_QUOTE],
              "lesson": f"Put the largest numbers first only for descending order. {guess}"}
    report = revise(cycle, scripted, lesson_id, answer, "run-guess")
    [step] = [s for s in report.steps if s.step == "revise"]
    assert step.status == "rejected" and "not marked 'hypothesis, unconfirmed'" in step.detail, step.detail
    assert cycle.store.load_lesson(lesson_id).insight == "Put the largest numbers first when sorting numbers."
    marked = answer | {"lesson": f"Put the largest numbers first only for descending order. {guess[:-1]} "
                                 "(hypothesis, unconfirmed)."}
    report = revise(cycle, scripted, lesson_id, marked, "run-marked")
    [step] = [s for s in report.steps if s.step == "revise"]
    assert step.status == "ok", step.detail
    assert "(hypothesis, unconfirmed)" in cycle.store.load_lesson(lesson_id).insight
