"""Two runs writing one memory root at once lose nothing (real processes, real engine)."""

from __future__ import annotations

import multiprocessing as mp

from memory_helpers import concurrent_writer, learn_desc

from tether.memory.cycle import MemoryCycle
from tether.memory.manifest import read_manifest

RUNS = 3


def test_two_concurrent_writers_lose_nothing(cycle: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(cycle, scripted)
    root = str(cycle.store.root)
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=concurrent_writer, args=(root, w, lesson_id, RUNS)) for w in (1, 2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0]

    store = cycle.store
    assert len(store.runs()) == 1 + 2 * RUNS
    lessons = store.lessons()
    assert len(lessons) == 1 + 2 * RUNS
    assert sorted(read_manifest(store.manifest_path).lessons) == sorted(x.id for x in lessons)
    shared = store.load_lesson(lesson_id)
    assert len(shared.history) == 2 * RUNS and all(h.status == "accepted" for h in shared.history)
    assert {h.run_id for h in shared.history} == {f"w{w}-run-{n}" for w in (1, 2) for n in range(RUNS)}
    with store.session():
        assert not store.rebuilt, "the index state should have been kept in step by both writers"
        assert store.index.count() == len(lessons) + len(store.runs())
    assert list(store.root.rglob("*.tmp")) == [], "a temp file was left behind"
