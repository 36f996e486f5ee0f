"""LessonIndex on Qdrant Edge: the Qdrant engine in-process, stored in a folder.

Parts: `EdgeIndex`. Sparse BM25 vectors use the engine's IDF modifier; with an
embedder, a dense cosine vector is added and the two are fused by RRF.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import qdrant_edge as qe

from memory.dense import Embedder
from memory.errors import IndexUnavailableError
from memory.index import DENSE, RRF_K, SPARSE, IndexDoc, IndexHit, Kind, point_id
from memory.text import sparse_document, sparse_query

_BATCH = 512


class EdgeIndex:
    """Qdrant Edge shard under `path` (default backend)."""

    name = "edge"

    def __init__(self, path: Path, embedder: Embedder | None = None) -> None:
        self.path = path
        self.embedder = embedder
        self._shard: qe.EdgeShard | None = None

    def _config(self) -> qe.EdgeConfig:
        dense = None
        if self.embedder is not None:
            dense = {DENSE: qe.EdgeVectorParams(size=self.embedder.dim, distance=qe.Distance.Cosine)}
        return qe.EdgeConfig(vectors=dense, sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)})

    @property
    def shard(self) -> qe.EdgeShard:
        if self._shard is None:
            msg = "edge index is not open; call open() (the store does this under its lock)"
            raise IndexUnavailableError(msg)
        return self._shard

    def open(self) -> None:
        if self._shard is not None:
            return
        if not (self.path / "edge_config.json").is_file():
            msg = f"no edge index at {self.path}"
            raise IndexUnavailableError(msg)
        try:
            shard = qe.EdgeShard.load(str(self.path), self._config())
            shard.info()
        except Exception as e:  # the engine raises plain errors for every kind of damage
            msg = f"edge index at {self.path} cannot be loaded ({e}); it will be rebuilt from markdown"
            raise IndexUnavailableError(msg) from e
        self._shard = shard

    def reset(self) -> None:
        self.close()
        shutil.rmtree(self.path, ignore_errors=True)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._shard = qe.EdgeShard.create(str(self.path), self._config())

    def close(self) -> None:
        if self._shard is not None:
            shard, self._shard = self._shard, None
            shard.flush()
            shard.close()

    def upsert(self, docs: Sequence[IndexDoc]) -> None:
        for start in range(0, len(docs), _BATCH):
            batch = docs[start : start + _BATCH]
            dense = self.embedder.embed([d.text for d in batch]) if self.embedder else None
            points = []
            for i, doc in enumerate(batch):
                vector: dict[str, object] = {SPARSE: qe.SparseVector(*sparse_document(doc.text))}
                if dense is not None:
                    vector[DENSE] = dense[i]
                points.append(qe.Point(point_id(doc.kind, doc.id), vector, doc.payload()))
            self.shard.update(qe.UpdateOperation.upsert_points(points))

    def delete(self, keys: Sequence[tuple[Kind, str]]) -> None:
        if keys:
            self.shard.update(qe.UpdateOperation.delete_points([point_id(k, i) for k, i in keys]))

    def search(self, text: str, kind: Kind, limit: int) -> list[IndexHit]:
        flt = qe.Filter(must=[qe.FieldCondition("kind", match=qe.MatchValue(kind))])
        indices, values = sparse_query(text)
        if not indices:
            return []
        sparse = qe.Query.Nearest(qe.SparseVector(indices, values), using=SPARSE)
        if self.embedder is None:
            request = qe.QueryRequest(limit=limit, query=sparse, filter=flt, with_payload=True)
        else:
            dense = qe.Query.Nearest(self.embedder.embed([text])[0], using=DENSE)
            request = qe.QueryRequest(
                limit=limit, query=qe.Fusion.Rrf(k=RRF_K), with_payload=True,
                prefetches=[qe.Prefetch(query=sparse, limit=limit * 4, filter=flt),
                            qe.Prefetch(query=dense, limit=limit * 4, filter=flt)],
            )
        return [IndexHit(kind=p.payload["kind"], id=p.payload["id"], score=p.score,
                         source_run=p.payload.get("source_run", "")) for p in self.shard.query(request)]

    def count(self) -> int:
        return self.shard.info().points_count
