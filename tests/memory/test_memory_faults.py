"""Memory that survives bad files and interruptions (issue 12).

A broken lesson is skipped with a warning naming it (never a silent "no
matches"), recall is bounded however large a past goal was, a file where the
index folder belongs is one line naming the fix, and a session cut short by
a signal leaves the index usable.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from memory_helpers import T0, learn_desc, record

from tether.memory.api import search_memory
from tether.memory.config import MemoryConfig
from tether.memory.cycle import MemoryCycle
from tether.memory.errors import IndexUnavailableError
from tether.memory.index_edge import EdgeIndex
from tether.memory.lesson import Lesson
from tether.memory.run import RunMeta
from tether.memory.store import MemoryStore


def _second_lesson(cycle: MemoryCycle) -> str:
    other = Lesson(
        id="L-00000002",
        title="Numeric sort",
        source_run="run-desc",
        source_outcome="success",
        source_goal="Sort the numbers",
        created=T0,
        insight="Sort numbers with sort -rn so the largest numbers come first.",
        applicability="sorting numbers",
    )
    with cycle.store.session():
        cycle.store.save_lesson(other, new=True)
    return other.id


@pytest.mark.parametrize(
    "damage", [b"\x00\xff\xfe binary", b"---\nid: [unclosed\n---\n## Insight\nx\n", b"---\nno end"]
)
def test_a_broken_lesson_is_skipped_with_a_warning_and_the_rest_is_found(cycle, scripted, caplog, damage):
    broken = learn_desc(cycle, scripted)
    healthy = _second_lesson(cycle)
    path = cycle.store.lesson_path(broken)
    path.write_bytes(damage)
    with caplog.at_level("WARNING"):
        hits = search_memory(cycle.store, "sort the numbers largest first", "lesson", 5)
        recalled = cycle.read("Sort the numbers in data.txt, largest first")
    assert [h["id"] for h in hits] == [healthy]
    assert [x.id for x in recalled.lessons] == [healthy]
    assert str(path) in caplog.text


def test_recall_stays_bounded_whatever_a_past_goal_held(cycle):
    huge = "Sort the numbers in data.txt " + "and also this " * 80_000  # ~1 MB goal of an earlier run
    past = record("run-huge", huge, turns=[("", "sort -n data.txt", 0, "")])
    meta = RunMeta(run_id="run-huge", goal=huge, outcome="success", score=1, finished=T0, turns=1)
    with cycle.store.session():
        cycle.store.save_run(past, meta)
    recall = cycle.read("Sort the numbers in data.txt")
    assert [r.run_id for r in recall.runs] == ["run-huge"]
    cfg = MemoryConfig()
    text = recall.prompt(cfg.recall_item_chars, cfg.recall_total_chars)
    assert len(text) < cfg.recall_total_chars + 3_000  # entries capped; the fixed descent rules come on top
    assert "run-huge" in text


def test_recall_leaves_out_entries_past_the_total_and_says_so(cycle, scripted):
    learn_desc(cycle, scripted)
    _second_lesson(cycle)
    recall = cycle.read("Sort the numbers in data.txt, largest first")
    text = recall.prompt(item_chars=40, total_chars=200)
    assert "left out to keep this block short" in text


def test_a_file_where_the_index_folder_belongs_is_one_line_naming_the_fix(tmp_path: Path):
    root = tmp_path / "memory"
    root.mkdir()
    (root / ".index").write_text("not a folder")
    store = MemoryStore(root, MemoryConfig())
    with pytest.raises(IndexUnavailableError) as e, store.session():
        pass
    message = str(e.value)
    assert "\n" not in message and f"rm {root / '.index'}" in message


class InterruptedOpen(EdgeIndex):
    """The real Edge index, with Ctrl-C arriving while it opens (once)."""

    fired = False

    def open(self) -> None:
        if not InterruptedOpen.fired:
            InterruptedOpen.fired = True
            raise KeyboardInterrupt
        super().open()


def test_ctrl_c_while_the_index_opens_is_a_ctrl_c_and_the_next_session_works(cycle, scripted, tmp_path):
    lesson = learn_desc(cycle, scripted)
    store = MemoryStore(cycle.store.root, MemoryConfig(), index=InterruptedOpen(cycle.store.root / ".index" / "edge"))
    with pytest.raises(KeyboardInterrupt), store.session():
        pass
    with store.session():
        assert [h.id for h in store.search("largest numbers first", "lesson", 5)] == [lesson]
