"""A person's edits of MEMORY.md lines: what the agent reads next, recorded in the files."""

from __future__ import annotations

from pathlib import Path

import pytest
from memory_helpers import Clock, learn_desc, record

from tether.memory.config import MemoryConfig
from tether.memory.cycle import MemoryCycle
from tether.memory.lesson import PERSON_EDIT
from tether.memory.manifest import lesson_line, read_manifest, rule_line
from tether.memory.review import accept_proposal

OLD = "Put the largest numbers first when sorting numbers."
NEW = "Deduplicate records before merging spreadsheets."
ERR = "ModuleNotFoundError: No module named 'yaml'"


@pytest.fixture(params=["edge", "qdrant"])
def backend_cycle(request: pytest.FixtureRequest, tmp_path: Path, clock: Clock) -> MemoryCycle:
    return MemoryCycle(tmp_path / "memory", MemoryConfig(index=request.param), clock=clock)


def edit_line(cycle: MemoryCycle, item_id: str, old: str, new: str) -> None:
    """Change the text of an item's MEMORY.md line, as a person in an editor would."""
    path = cycle.store.manifest_path
    lines = path.read_text().splitlines()
    [n] = [i for i, line in enumerate(lines) if f"[{item_id}]" in line]
    assert old in lines[n]
    lines[n] = lines[n].replace(old, new)
    path.write_text("\n".join(lines) + "\n")


def test_edited_lesson_line_is_what_the_agent_reads_and_searches(backend_cycle: MemoryCycle, scripted,
                                                                 clock: Clock) -> None:
    cycle = backend_cycle
    lesson_id = learn_desc(cycle, scripted)
    clock.advance(hours=1)
    edit_line(cycle, lesson_id, OLD, NEW)

    recall = cycle.read("merge spreadsheets")  # a term only the edited text has: the index reflects it
    assert recall.lesson_ids == [lesson_id]
    assert recall.lessons[0].insight == NEW
    assert f"[{lesson_id}] {NEW}" in recall.prompt() and OLD not in recall.prompt()

    lesson = cycle.store.load_lesson(lesson_id)
    assert (lesson.insight, lesson.title, lesson.revision_count, lesson.revised) == (
        NEW,
        "Largest numbers first",
        1,
        clock(),
    )
    [entry] = lesson.history
    assert (entry.verdict, entry.status, entry.run_id, entry.reason) == ("edited", "accepted", "", PERSON_EDIT)
    assert (entry.before, entry.evidence) == (OLD, [])
    text = cycle.store.lesson_path(lesson_id).read_text()
    assert "## Insight\nDeduplicate records before merging spreadsheets." in text
    assert "no run · edited · accepted" in text and PERSON_EDIT in text
    assert read_manifest(cycle.store.manifest_path).lessons[lesson_id] == lesson_line(lesson)

    cycle.read("merge spreadsheets")  # applied once: a second read changes nothing
    assert len(cycle.store.load_lesson(lesson_id).history) == 1


def test_title_edit_and_edits_that_change_nothing(cycle: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(cycle, scripted)
    edit_line(cycle, lesson_id, "(success)", "(failure)")  # the outcome is not editable
    cycle.read("sort numbers")
    lesson = cycle.store.load_lesson(lesson_id)
    assert lesson.history == [] and lesson.source_outcome == "success"
    assert read_manifest(cycle.store.manifest_path).lessons[lesson_id] == lesson_line(lesson)

    edit_line(cycle, lesson_id, f"Largest numbers first: {OLD}", "Order first: Read the order the task asks for.")
    cycle.read("sort numbers")
    lesson = cycle.store.load_lesson(lesson_id)
    assert (lesson.title, lesson.insight) == ("Order first", "Read the order the task asks for.")


def test_deleting_an_edited_line_still_forgets(cycle: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(cycle, scripted)
    edit_line(cycle, lesson_id, OLD, NEW)
    assert cycle.read("merge spreadsheets").lesson_ids == [lesson_id]
    path = cycle.store.manifest_path
    path.write_text("\n".join(line for line in path.read_text().splitlines() if lesson_id not in line))
    assert cycle.read("merge spreadsheets").lessons == []
    model = scripted(
        compile=["ok"], lessons=[{"lessons": [{"title": "t", "insight": "Check the output file after writing it."}]}]
    )
    cycle.after_run(record("run-2", "Write a report", turns=[("write", "echo hi > report.txt", 0, "")]), model)
    assert lesson_id not in read_manifest(path).lessons
    assert cycle.read("merge spreadsheets").lessons == []


def test_edited_rule_line_changes_the_rule_text_shown(tmp_path: Path, scripted, clock: Clock) -> None:
    cycle = MemoryCycle(tmp_path / "m", MemoryConfig(rule_trial_rate=0.0, rule_initial_confidence=0.6), clock=clock)
    model = scripted(compile=["c"] * 2, lessons=[{"lessons": []}] * 2, rule=["Install PyYAML first."])
    for run_id in ("run-1", "run-2"):
        cycle.after_run(record(run_id, "Render the template with python", "failure", failed=[("python", ERR)]), model)
    [rule] = cycle.store.rules()
    goal = "Render the template with python"
    assert [r.text for r in cycle.read(goal).rules] == ["Install PyYAML first."]

    edit_line(cycle, rule.id, "Install PyYAML first.", "Run pip install pyyaml inside the venv before python.")
    recall = cycle.read(goal)
    assert [r.text for r in recall.rules] == ["Run pip install pyyaml inside the venv before python."]
    assert "Run pip install pyyaml inside the venv before python. (tool python" in recall.prompt()
    edited = cycle.store.load_rule(rule.id)
    assert edited.edited == clock() and edited.confidence == rule.confidence
    assert "edited: " in (cycle.store.rules_dir / f"{rule.id}.md").read_text()
    with cycle.store.session():
        assert [h.id for h in cycle.store.search("pyyaml venv", "rule", 5)] == [rule.id]
    assert read_manifest(cycle.store.manifest_path).rules[rule.id] == rule_line(edited)


def test_a_later_automatic_write_never_discards_an_unapplied_edit(cycle: MemoryCycle, scripted, clock: Clock) -> None:
    lesson_id = learn_desc(cycle, scripted)
    store = cycle.store
    with store.session():  # a run holds the lock and rewrites the lesson while the person edits its line
        edit_line(cycle, lesson_id, OLD, NEW)
        lesson = store.load_lesson(lesson_id)
        store.save_lesson(lesson.model_copy(update={"applicability": "numeric sorts, checked"}))
        assert NEW in read_manifest(store.manifest_path).lessons[lesson_id]  # the person's line is kept
    clock.advance(hours=1)
    assert cycle.read("merge spreadsheets").lessons[0].insight == NEW  # and applied by the next session
    lesson = store.load_lesson(lesson_id)
    assert lesson.applicability == "numeric sorts, checked" and lesson.history[-1].before == OLD

    # A later automatic revision only proposes (the edit pinned the lesson); accepting it applies it.
    narrow = {"verdict": "too_general", "evidence": ["sort -rn data.txt > out.txt"],
              "lesson": "Put the largest numbers first only for descending order.",
              "applicability": "numeric sorts, checked, in descending order"}
    run = record("run-asc", "Merge spreadsheets in order", "failure",
                 turns=[(f"Per {lesson_id}.", "sort -rn values.txt", 0, "")])
    cycle.after_run(run, scripted(compile=["c"], revise=[narrow], lessons=[{"lessons": []}]), cycle.read(run.goal))
    assert store.load_lesson(lesson_id).insight == NEW
    accept_proposal(store, lesson_id, "run-asc", clock())
    lesson = store.load_lesson(lesson_id)
    assert lesson.insight == narrow["lesson"]
    assert [(h.verdict, h.before) for h in lesson.history] == [("edited", OLD), ("too_general", NEW)]
    assert read_manifest(store.manifest_path).lessons[lesson_id] == lesson_line(lesson)


def test_lines_without_a_record_and_hand_edited_files(cycle: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(cycle, scripted)
    store = cycle.store
    path = store.lesson_path(lesson_id)
    path.write_text(path.read_text().replace(OLD, "Sort numbers from largest to smallest."))
    assert cycle.read("sort numbers").lessons[0].insight == "Sort numbers from largest to smallest."
    assert "Sort numbers from largest to smallest." in store.manifest_path.read_text()  # the line follows the file
    lesson = store.load_lesson(lesson_id)  # a person's edit of the file, recorded as one and pinned
    assert [(h.verdict, h.status, h.before) for h in lesson.history] == [("edited", "accepted", OLD)]
    assert "lessons/" in lesson.history[0].reason and lesson.pinned

    store.lines_path.unlink()  # a MEMORY.md from before lines were editable: the newer side wins
    edit_line(cycle, lesson_id, "Sort numbers from largest to smallest.", NEW)
    assert cycle.read("merge spreadsheets").lessons[0].insight == NEW
    assert store.load_lesson(lesson_id).history[-1].verdict == "edited"
