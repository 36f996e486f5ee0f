"""Retrieval latency and rebuild time of the memory index.

Measures, on synthetic lessons (no model, no network):
- search p50/p99 at 1k, 10k and 100k lessons for Qdrant Edge (in-process) and
  qdrant-client local mode (100k for local mode only within a time cap);
- recall-level search (MEMORY.md filter included) at 10k on Edge;
- rebuild of the Edge index from 10k lesson markdown files.

Targets: p50 <= 5 ms at 10k, rebuild <= 30 s for 10k (sparse only).
Run: .venv/bin/python bench/memory_retrieval.py [--quick]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

# run as a script, this folder comes first on sys.path, and bench/sandbox.py would shadow `sandbox`
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from tether.memory.config import MemoryConfig  # noqa: E402
from tether.memory.index import IndexDoc, LessonIndex  # noqa: E402
from tether.memory.index_edge import EdgeIndex  # noqa: E402
from tether.memory.index_qdrant import QdrantIndex  # noqa: E402
from tether.memory.lesson import Lesson, lesson_to_markdown  # noqa: E402
from tether.memory.manifest import Manifest, lesson_line, render_manifest  # noqa: E402
from tether.memory.store import MemoryStore  # noqa: E402

RNG = random.Random(7)
VOCAB = [f"{a}{b}" for a in ("sort", "pip", "git", "test", "file", "json", "http", "disk", "user", "path",
                             "log", "cron", "yaml", "db", "cache", "lock", "port", "env", "shell", "build")
         for b in ("", "er", "ing", "s", "ed", "x", "y", "z", "q", "v") ] + [f"w{i}" for i in range(1800)]
WEIGHTS = [1 / (i + 1) ** 0.9 for i in range(len(VOCAB))]
QUERIES = 200


def text(n: int) -> str:
    return " ".join(RNG.choices(VOCAB, WEIGHTS, k=n))


def docs(n: int) -> list[IndexDoc]:
    return [IndexDoc(kind="lesson", id=f"L-{i:06d}", text=text(30), source_runs=[f"run-{i // 3}"]) for i in range(n)]


def timed_search(index: LessonIndex, queries: list[str], cap_s: float) -> tuple[float, float, int]:
    times = []
    start = time.perf_counter()
    for q in queries:
        t = time.perf_counter()
        index.search(q, "lesson", 5)
        times.append((time.perf_counter() - t) * 1000)
        if time.perf_counter() - start > cap_s:
            break
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.99))], len(times)


def bench_backend(name: str, make, sizes: list[int], insert_cap_s: float, search_cap_s: float, tmp: Path) -> None:
    queries = [text(6) for _ in range(QUERIES)]
    for n in sizes:
        index = make(tmp / f"{name}-{n}")
        index.reset()
        all_docs = docs(n)
        t = time.perf_counter()
        inserted = 0
        for start in range(0, n, 2000):
            index.upsert(all_docs[start : start + 2000])
            inserted = min(n, start + 2000)
            if time.perf_counter() - t > insert_cap_s:
                break
        insert_s = time.perf_counter() - t
        index.search(queries[0], "lesson", 5)  # warm
        p50, p99, measured = timed_search(index, queries, cap_s=search_cap_s)
        note = "" if inserted == n else f"  (capped: {inserted} of {n} inserted in {insert_s:.0f}s)"
        print(f"{name:14s} {inserted:>7d} lessons  insert {insert_s:6.1f}s  search p50 {p50:7.2f} ms  "
              f"p99 {p99:7.2f} ms  ({measured} queries){note}", flush=True)
        index.close()


def bench_rebuild(n: int, tmp: Path) -> None:
    root = tmp / "rebuild"
    (root / "lessons").mkdir(parents=True)
    now = datetime.now(UTC)
    lines = {}
    for i in range(n):
        lesson = Lesson(id=f"L-{i:06d}", title=text(4), source_run=f"run-{i // 3}", source_outcome="success",
                        source_goal=text(10), created=now, insight=text(25), applicability=text(8))
        (root / "lessons" / f"{lesson.id}.md").write_text(lesson_to_markdown(lesson), encoding="utf-8")
        lines[lesson.id] = lesson_line(lesson)
    (root / "MEMORY.md").write_text(render_manifest(Manifest(exists=True, lessons=lines)), encoding="utf-8")
    store = MemoryStore(root, MemoryConfig())
    t = time.perf_counter()
    with store.session():  # no index yet: the session rebuilds it from markdown
        rebuild_s = time.perf_counter() - t
        queries = [text(6) for _ in range(QUERIES)]
        times = []
        for q in queries:
            t = time.perf_counter()
            store.search(q, "lesson", 5)
            times.append((time.perf_counter() - t) * 1000)
    times.sort()
    print(f"rebuild (edge) {n:>7d} lessons from markdown: {rebuild_s:.1f}s (target <= 30 s)")
    print(f"recall search  {n:>7d} lessons (MEMORY.md filter): p50 {statistics.median(times):.2f} ms  "
          f"p99 {times[int(len(times) * 0.99)]:.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1k and 10k only")
    args = parser.parse_args()
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        bench_backend("edge", lambda p: EdgeIndex(p), sizes, insert_cap_s=300, search_cap_s=30, tmp=tmp)
        # qdrant-client local mode is pure Python (a test double for a server): time-capped.
        bench_backend("qdrant-local", lambda p: QdrantIndex(path=p, collection="bench"), sizes,
                      insert_cap_s=30, search_cap_s=10, tmp=tmp)
        bench_rebuild(10_000, tmp)


if __name__ == "__main__":
    main()
