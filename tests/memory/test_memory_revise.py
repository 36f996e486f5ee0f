"""ReHarness backward pass: used lessons are revised from their source run only."""

from __future__ import annotations

from memory_helpers import learn_desc, record

from tether.memory.cycle import MemoryCycle

ASC_GOAL = "Sort the numbers in values.txt in ascending order"
NARROWED = {
    "verdict": "too general",
    "evidence": ["Sort the numbers in data.txt in descending order", "sort -rn data.txt > out.txt"],
    "lesson": "Put the largest numbers first only when the task asks for descending order; "
              "hypothesis, unconfirmed for other orders.",
    "applicability": "numeric sorting tasks that ask for descending order",
}


def asc_run(lesson_id: str, cite: bool = True):
    why = f"Per {lesson_id}, put the largest first." if cite else "Sort it."
    return record("run-asc", ASC_GOAL, "failure", turns=[(why, "sort -rn values.txt > out.txt", 0, "")])


def test_the_sources_example_ends_too_general_with_narrowed_applicability(cycle: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(cycle, scripted)
    recall = cycle.read(ASC_GOAL)
    assert recall.lesson_ids == [lesson_id]
    model = scripted(compile=["- Probable cause: followed a descending-order lesson."], revise=[NARROWED],
                     lessons=[{"lessons": []}])
    report = cycle.after_run(asc_run(lesson_id), model, recall)
    assert report.used_lessons == [lesson_id]
    lesson = cycle.store.load_lesson(lesson_id)
    assert lesson.insight == NARROWED["lesson"]
    assert lesson.applicability == "numeric sorting tasks that ask for descending order"
    assert lesson.revision_count == 1
    [entry] = lesson.history
    assert (entry.verdict, entry.status, entry.run_id) == ("too_general", "accepted", "run-asc")
    assert entry.evidence == NARROWED["evidence"]
    assert entry.before == "Put the largest numbers first when sorting numbers."
    assert [c["site"] for c in model.calls] == ["compile", "revise", "lessons"]


def test_history_keeps_every_verdict_across_revisions(cycle: MemoryCycle, scripted, clock) -> None:
    lesson_id = learn_desc(cycle, scripted)
    cycle.after_run(asc_run(lesson_id), scripted(compile=["c"], revise=[NARROWED], lessons=[{"lessons": []}]),
                    cycle.read(ASC_GOAL))
    clock.advance(hours=1)
    confirmed = {"verdict": "confirmed", "evidence": ["Largest numbers must come first."], "lesson": NARROWED["lesson"]}
    desc_again = record("run-desc-2", "Sort the numbers in big.txt in descending order",
                        turns=[(f"Using {lesson_id}.", "sort -rn big.txt", 0, "3\n2")])
    cycle.after_run(desc_again, scripted(compile=["c"], revise=[confirmed], lessons=[{"lessons": []}]),
                    cycle.read(desc_again.goal))
    lesson = cycle.store.load_lesson(lesson_id)
    assert [(h.run_id, h.verdict, h.status) for h in lesson.history] == [
        ("run-asc", "too_general", "accepted"), ("run-desc-2", "confirmed", "accepted")]
    assert lesson.insight == NARROWED["lesson"] and lesson.revision_count == 2


def test_revision_inventing_facts_absent_from_the_source_run_is_rejected(cycle: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(cycle, scripted)
    leaky = {"verdict": "too_general", "evidence": ["sort -rn data.txt > out.txt"],
             "lesson": "For ascending order run `sort -n values.txt` instead.", "applicability": "ascending sorts"}
    report = cycle.after_run(asc_run(lesson_id), scripted(compile=["c"], revise=[leaky], lessons=[{"lessons": []}]),
                             cycle.read(ASC_GOAL))
    [step] = [s for s in report.steps if s.step == "revise"]
    assert step.status == "rejected" and "values.txt" in step.detail
    lesson = cycle.store.load_lesson(lesson_id)
    assert lesson.insight == "Put the largest numbers first when sorting numbers." and lesson.revision_count == 0
    [entry] = lesson.history
    assert entry.status == "rejected" and "not supported by the source run" in entry.reason
    assert entry.proposed == leaky["lesson"]


def test_evidence_not_in_the_source_run_is_rejected(cycle: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(cycle, scripted)
    fake = dict(NARROWED, evidence=["the user said descending order is always right"])
    cycle.after_run(asc_run(lesson_id), scripted(compile=["c"], revise=[fake], lessons=[{"lessons": []}]),
                    cycle.read(ASC_GOAL))
    [entry] = cycle.store.load_lesson(lesson_id).history
    assert entry.status == "rejected" and "evidence not found" in entry.reason


def test_answer_that_is_not_json_is_rejected_and_recorded(cycle: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(cycle, scripted)
    model = scripted(compile=["c"], revise=["I think the lesson is fine."], lessons=["no json here"])
    report = cycle.after_run(asc_run(lesson_id), model, cycle.read(ASC_GOAL))
    assert {(s.step, s.status) for s in report.steps} >= {("revise", "rejected"), ("lessons", "rejected")}
    [entry] = cycle.store.load_lesson(lesson_id).history
    assert entry.status == "rejected" and entry.verdict is None and "not a JSON object" in entry.reason


def test_lesson_retrieved_but_not_relied_on_is_not_revised(cycle: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(cycle, scripted)
    model = scripted(compile=["c"], lessons=[{"lessons": []}])  # no revise answers: a call would fail the test
    report = cycle.after_run(asc_run(lesson_id, cite=False), model, cycle.read(ASC_GOAL))
    assert report.used_lessons == [] and report.unused_lessons == [lesson_id]
    assert [c["site"] for c in model.calls] == ["compile", "lessons"]
    assert cycle.store.load_lesson(lesson_id).history == []


def test_new_lessons_link_their_run_and_drop_near_duplicates(cycle: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(cycle, scripted)
    answer = {"lessons": [
        {"title": "dup", "insight": "Put the largest numbers first when sorting numbers."},
        {"title": "Check order", "insight": "After sorting, print the file and check the order the task asks for.",
         "applicability": "any sort task"},
        {"title": "invented", "insight": "Use `sort -g numbers.csv` for floats."},
    ]}
    report = cycle.after_run(asc_run(lesson_id), scripted(compile=["c"], revise=[NARROWED], lessons=[answer]),
                             cycle.read(ASC_GOAL))
    assert len(report.new_lessons) == 1
    new = cycle.store.load_lesson(report.new_lessons[0])
    assert (new.source_run, new.source_outcome, new.source_goal) == ("run-asc", "failure", ASC_GOAL)
    text = (cycle.store.lessons_dir / f"{new.id}.md").read_text()
    assert "](../runs/run-asc/compilation.md)" in text and "](../runs/run-asc/trajectory.md)" in text
    assert sorted(s.status for s in report.steps if s.step == "lessons") == ["ok", "rejected", "rejected"]


def test_counterfactual_no_discards_the_revision(tmp_path, scripted, clock) -> None:
    from tether.memory.config import MemoryConfig

    cycle = MemoryCycle(tmp_path / "m", MemoryConfig(counterfactual=True), clock=clock)
    lesson_id = learn_desc(cycle, scripted)
    model = scripted(compile=["c"], revise=[NARROWED], counterfactual=[{"prevents": False, "why": "still wrong"}],
                     lessons=[{"lessons": []}])
    cycle.after_run(asc_run(lesson_id), model, cycle.read(ASC_GOAL))
    [entry] = cycle.store.load_lesson(lesson_id).history
    assert entry.status == "rejected" and "counterfactual" in entry.reason
