"""A lesson's history past `memory.history_keep` moves to lessons/history/<id>.md; what it said stays counted."""

from __future__ import annotations

from memory_helpers import Clock, learn_desc, record

from tether.memory.config import MemoryConfig
from tether.memory.cycle import MemoryCycle
from tether.memory.lesson import archived_history

CONFIRMED = {"verdict": "confirmed", "evidence": ["Largest numbers must come first."], "lesson": ""}


def confirm(cycle: MemoryCycle, scripted, clock: Clock, lesson_id: str, n: int) -> None:
    clock.advance(hours=1)
    run = record(f"run-c{n}", f"Sort the numbers in c{n}.txt in descending order",
                 turns=[(f"Per {lesson_id}, largest first.", f"sort -rn c{n}.txt", 0, "9")])
    cycle.after_run(run, scripted(compile=["c"], revise=[CONFIRMED], lessons=[{"lessons": []}]), cycle.read(run.goal))


def test_old_history_entries_move_to_an_archive_file_and_still_count(tmp_path, scripted, clock: Clock) -> None:
    cycle = MemoryCycle(tmp_path / "memory", MemoryConfig(history_keep=4), clock=clock)
    lesson_id = learn_desc(cycle, scripted)
    for n in range(10):
        confirm(cycle, scripted, clock, lesson_id, n)
    lesson = cycle.store.load_lesson(lesson_id)
    assert len(lesson.history) == 4 and lesson.history_archived == 6
    assert (lesson.confirmations, lesson.uses, lesson.pinned) == (10, 10, False)
    text = cycle.store.lesson_path(lesson_id).read_text()
    assert f"(6 older entries are in [history/{lesson_id}.md](history/{lesson_id}.md)" in text
    archive = cycle.store.history_path(lesson_id)
    archived = archived_history(archive.read_text(), archive)
    assert [h.run_id for h in archived] == [f"run-c{n}" for n in range(6)]  # oldest first, nothing lost
    assert [h.run_id for h in lesson.history] == [f"run-c{n}" for n in range(6, 10)]
    assert "Archived revision history" in archive.read_text()
    assert [x.id for x in cycle.store.lessons()] == [lesson_id]  # the archive is no lesson
    assert cycle.read("Sort the numbers in z.txt in descending order").lesson_ids == [lesson_id]
    assert cycle.store.rebuild() >= 1  # the index is rebuilt from the lesson files alone

    size = len(text)
    for n in range(10, 20):
        confirm(cycle, scripted, clock, lesson_id, n)
    assert abs(len(cycle.store.lesson_path(lesson_id).read_text()) - size) < 200  # the lesson file stays bounded
    assert cycle.store.load_lesson(lesson_id).confirmations == 20


def test_history_keep_zero_keeps_every_entry(tmp_path, scripted, clock: Clock) -> None:
    cycle = MemoryCycle(tmp_path / "memory", MemoryConfig(history_keep=0), clock=clock)
    lesson_id = learn_desc(cycle, scripted)
    for n in range(5):
        confirm(cycle, scripted, clock, lesson_id, n)
    assert len(cycle.store.load_lesson(lesson_id).history) == 5
    assert not cycle.store.history_path(lesson_id).exists()
