"""The index kept open between sessions of one process: edits between two recalls are still seen.

Real engine, real files, real processes: a lesson file or MEMORY.md edited by
hand between two recalls of one process, a second process that opens the
index while this one holds it (it waits, it never rebuilds), and the
fingerprint that does not read each run.
"""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import pytest
from memory_helpers import Clock, learn_desc, record

from tether.memory.config import MemoryConfig
from tether.memory.cycle import MemoryCycle
from tether.memory.manifest import read_manifest

OLD = "Put the largest numbers first when sorting numbers."
NEW = "Deduplicate records before merging spreadsheets."


@pytest.fixture(params=["watched", "unwatched"])
def either(request: pytest.FixtureRequest, tmp_path: Path, clock: Clock) -> MemoryCycle:
    """A cycle whose store has a folder watch (inotify), or lists the folders each session."""
    cycle = MemoryCycle(tmp_path / "memory", MemoryConfig(rule_trial_rate=0.0), clock=clock)
    cycle.store._watch_ok = request.param == "watched"
    return cycle


def test_a_lesson_file_edited_between_two_recalls_is_seen(either: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(either, scripted)
    store = either.store
    assert either.read("sort numbers in descending order").lesson_ids == [lesson_id]
    assert store._seen is not None, "the index should still be open after the session"
    path = store.lesson_path(lesson_id)
    path.write_text(path.read_text().replace(OLD, NEW))  # in place: the folder's own mtime does not change
    recall = either.read("merge spreadsheets")
    assert recall.lesson_ids == [lesson_id]
    assert recall.lessons[0].insight == NEW
    assert NEW in store.manifest_path.read_text()


def test_a_memory_md_edit_and_a_deleted_lesson_file_between_recalls(either: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(either, scripted)
    store = either.store
    assert either.read("sort numbers").lesson_ids == [lesson_id]
    text = store.manifest_path.read_text()
    store.manifest_path.write_text(text.replace(OLD, NEW))
    assert either.read("merge spreadsheets").lessons[0].insight == NEW
    assert store.load_lesson(lesson_id).insight == NEW
    store.lesson_path(lesson_id).unlink()
    assert either.read("merge spreadsheets").lesson_ids == []


def test_a_lesson_file_added_by_hand_between_recalls_is_indexed(either: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(either, scripted)
    store = either.store
    assert either.read("sort numbers").lesson_ids == [lesson_id]
    copy = store.lessons_dir / "L-byhand01.md"  # as a `git pull` of another machine's memory would bring it
    copy.write_text(store.lesson_path(lesson_id).read_text().replace(lesson_id, "L-byhand01").replace(OLD, NEW))
    either.read("merge spreadsheets")  # not listed in MEMORY.md, so not recalled; but indexed
    with store.session():
        assert [h.id for h in store.index.search("merge spreadsheets", "lesson", 5)] == ["L-byhand01"]


def _other_process_learns(root: str, script: str) -> None:
    from tether.runtime.models.scripted import ScriptedChatModel

    cycle = MemoryCycle(Path(root), MemoryConfig(rule_trial_rate=0.0))
    goal = "Merge the two spreadsheets"
    rec = record("run-other", goal, turns=[("Deduplicate records first.", "sort -u a.csv b.csv > m.csv", 0, "")])
    cycle.after_run(rec, ScriptedChatModel.from_file(Path(script)), cycle.read(goal))
    assert not cycle.store.rebuilt, "the other process should have found the index current"


def test_another_process_waits_for_the_open_index_and_this_one_sees_its_writes(cycle: MemoryCycle, scripted,
                                                                              tmp_path: Path) -> None:
    lesson_id = learn_desc(cycle, scripted)
    store = cycle.store
    store_keep = store._seen
    assert cycle.read("sort numbers").lesson_ids == [lesson_id] and store_keep is not None
    script = tmp_path / "other.yaml"
    script.write_text('responses:\n  compile: ["c"]\n  lessons: [\'{"lessons": [{"title": "Dedup", "insight": '
                      '"Deduplicate records first."}]}\']\n')
    # Started while this process still holds the engine open: the other one waits for its release.
    proc = mp.get_context("spawn").Process(target=_other_process_learns, args=(str(store.root), str(script)))
    proc.start()
    proc.join(timeout=120)
    assert proc.exitcode == 0
    recall = cycle.read("deduplicate records")
    assert [x.insight for x in recall.lessons] == ["Deduplicate records first."]
    assert not store.rebuilt
    assert sorted(read_manifest(store.manifest_path).lessons) == sorted(x.id for x in store.lessons())


def test_fingerprint_follows_lessons_and_the_runs_folder_not_each_run(cycle: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(cycle, scripted)
    store = cycle.store
    before = store.fingerprint()
    trajectory = store.run_dir("run-desc") / "trajectory.md"
    trajectory.write_text(trajectory.read_text() + "\n")  # no run file is read or listed
    assert store.fingerprint() == before
    (store.runs_dir / "run-added").mkdir()
    added = store.fingerprint()
    assert added != before
    path = store.lesson_path(lesson_id)
    path.write_text(path.read_text() + "\n")
    assert store.fingerprint() != added


def test_two_stores_of_one_process_take_the_index_over(tmp_path: Path, scripted, clock: Clock) -> None:
    first = MemoryCycle(tmp_path / "memory", MemoryConfig(rule_trial_rate=0.0), clock=clock)
    lesson_id = learn_desc(first, scripted)
    second = MemoryCycle(tmp_path / "memory", MemoryConfig(rule_trial_rate=0.0), clock=clock)
    for _ in range(3):  # each hands the engine to the other at once, without waiting for the idle release
        assert second.read("sort numbers").lesson_ids == [lesson_id]
        assert first.read("sort numbers").lesson_ids == [lesson_id]
    assert first.store._seen is not None and second.store._seen is None
