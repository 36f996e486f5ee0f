"""Retrieval through the real engines: Qdrant Edge and qdrant-client local mode."""

from __future__ import annotations

from pathlib import Path

import pytest
from memory_helpers import Clock, learn_desc, record

from tether.memory.config import MemoryConfig
from tether.memory.cycle import MemoryCycle
from tether.memory.dense import HashEmbedder
from tether.memory.index_edge import EdgeIndex
from tether.memory.index_qdrant import QdrantIndex
from tether.memory.manifest import read_manifest

BACKENDS = ["edge", "qdrant"]


@pytest.fixture(params=BACKENDS)
def backend_cycle(request: pytest.FixtureRequest, tmp_path: Path, clock: Clock) -> MemoryCycle:
    return MemoryCycle(tmp_path / "memory", MemoryConfig(index=request.param), clock=clock)


def test_lesson_found_for_similar_task_not_for_unrelated(backend_cycle: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(backend_cycle, scripted)
    similar = backend_cycle.read("Sort the numbers in values.txt in ascending order")
    assert similar.lesson_ids == [lesson_id]
    assert similar.lessons[0].source_outcome == "success"
    assert similar.lessons[0].trajectory == "/memory/runs/run-desc/trajectory.md"
    assert [r.run_id for r in similar.runs] == ["run-desc"]
    unrelated = backend_cycle.read("Configure nginx as a reverse proxy for grafana")
    assert unrelated.lessons == [] and unrelated.runs == []


def test_deleting_the_memory_md_line_forgets_the_lesson(backend_cycle: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(backend_cycle, scripted)
    manifest = backend_cycle.store.manifest_path
    text = manifest.read_text()
    assert lesson_id in text
    manifest.write_text("\n".join(line for line in text.splitlines() if lesson_id not in line))
    assert backend_cycle.read("Sort the numbers in values.txt in ascending order").lessons == []
    # A later write does not bring the line back.
    model = scripted(
        compile=["ok"], lessons=[{"lessons": [{"title": "t", "insight": "Check the output file after writing it."}]}]
    )
    backend_cycle.after_run(record(
        "run-2", "Write a report", turns=[("write", "echo hi > report.txt", 0, "")]), model)
    assert lesson_id not in read_manifest(manifest).lessons
    assert (backend_cycle.store.lessons_dir / f"{lesson_id}.md").is_file()


def test_corrupt_index_is_rebuilt_on_open(backend_cycle: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(backend_cycle, scripted)
    index_dir = backend_cycle.store.root / ".index"
    for path in index_dir.rglob("*"):
        if path.is_file() and path.name != "state.json":
            path.write_bytes(b"\x00garbage\xff" * 3)
    recall = backend_cycle.read("sort numbers in descending order")
    assert recall.lesson_ids == [lesson_id]
    assert backend_cycle.store.rebuilt


def test_missing_index_and_hand_edited_lesson_are_reindexed(backend_cycle: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(backend_cycle, scripted)
    path = backend_cycle.store.lessons_dir / f"{lesson_id}.md"
    path.write_text(path.read_text().replace("Put the largest numbers first when sorting numbers.",
                                             "Deduplicate records before merging spreadsheets."))
    recall = backend_cycle.read("merge spreadsheets")
    assert recall.lesson_ids == [lesson_id]
    assert recall.lessons[0].insight == "Deduplicate records before merging spreadsheets."


@pytest.mark.parametrize("make", [
    lambda p, e: EdgeIndex(p / "edge", embedder=e),
    lambda p, e: QdrantIndex(path=p / "qdrant", collection="t", embedder=e),
], ids=BACKENDS)
def test_hybrid_rrf_path_with_a_dense_embedder(tmp_path: Path, make, scripted, clock: Clock) -> None:
    index = make(tmp_path / "ix", HashEmbedder())
    cycle = MemoryCycle(tmp_path / "memory", MemoryConfig(), index=index, clock=clock)
    lesson_id = learn_desc(cycle, scripted)
    assert cycle.read("sort numbers descending").lesson_ids == [lesson_id]
