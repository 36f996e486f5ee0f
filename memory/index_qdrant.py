"""LessonIndex on a Qdrant server (by URL) or qdrant-client's local mode (a folder).

Parts: `QdrantIndex`. Same vectors, payload and search modes (BM25, dense,
hybrid by RRF) as the edge backend, so the two answer alike; a server is the path to many runs or shared memory.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from qdrant_client import QdrantClient, models

from tether.memory.config import MemoryConfig
from tether.memory.dense import Embedder
from tether.memory.errors import IndexBusyError, IndexUnavailableError
from tether.memory.index import BUSY_WAIT_S, DENSE, RRF_K, SPARSE, IndexDoc, IndexHit, Kind, SearchMode, point_id
from tether.memory.text import sparse_document, sparse_query

_BATCH = 512


class QdrantIndex:
    """One collection on a Qdrant server, or in a local-mode folder when no URL is given."""

    name = "qdrant"

    def __init__(self, *, collection: str, url: str | None = None, path: Path | None = None,
                 embedder: Embedder | None = None, mode: SearchMode = "hybrid", min_score: float | None = None) -> None:
        if (url is None) == (path is None):
            msg = "QdrantIndex needs exactly one of url (server) or path (local mode)"
            raise ValueError(msg)
        self.url, self.path, self.collection, self.embedder = url, path, collection, embedder
        self.mode, self.min_score = mode, min_score
        self._client: QdrantClient | None = None

    @property
    def client(self) -> QdrantClient:
        if self._client is None:
            msg = "qdrant index is not open; call open() (the store does this under its lock)"
            raise IndexUnavailableError(msg)
        return self._client

    def _connect(self) -> QdrantClient:
        deadline = time.monotonic() + BUSY_WAIT_S
        while True:
            try:
                if self.url is not None:
                    return QdrantClient(url=self.url, timeout=10)
                return QdrantClient(path=str(self.path))
            except Exception as e:  # local mode raises plain errors on a damaged folder
                where = self.url or self.path
                if "already accessed" not in str(e):
                    msg = f"qdrant index at {where} cannot be opened ({e}); it will be rebuilt from markdown"
                    raise IndexUnavailableError(msg) from e
                if time.monotonic() > deadline:  # never rebuilt: another process uses the folder
                    msg = (f"the memory index at {where} is held by another tether process for over "
                           f"{BUSY_WAIT_S:.0f} s; try again when it has finished")
                    raise IndexBusyError(msg) from e
                time.sleep(0.02)  # held open between another process's sessions: released shortly

    def open(self) -> None:
        if self._client is not None:
            return
        client = self._connect()
        try:
            exists = client.collection_exists(self.collection)
        except Exception as e:  # network errors from a server, parse errors from local mode
            client.close()
            msg = f"qdrant index {self.collection} is unreachable ({e})"
            raise IndexUnavailableError(msg) from e
        if not exists:
            client.close()
            msg = f"qdrant collection {self.collection} does not exist"
            raise IndexUnavailableError(msg)
        self._client = client

    def reset(self) -> None:
        self.close()
        if self.path is not None:
            shutil.rmtree(self.path, ignore_errors=True)
        client = self._connect()
        if client.collection_exists(self.collection):
            client.delete_collection(self.collection)
        dense = {}
        if self.embedder is not None:
            dense = {DENSE: models.VectorParams(size=self.embedder.dim, distance=models.Distance.COSINE)}
        client.create_collection(
            self.collection, vectors_config=dense,
            sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
        )
        if self.url is not None:  # local mode ignores payload indexes and warns
            client.create_payload_index(self.collection, "kind", models.PayloadSchemaType.KEYWORD)
        self._client = client

    def flush(self) -> None:
        """Nothing to do: the client writes through on each call."""

    def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            client.close()

    def upsert(self, docs: Sequence[IndexDoc]) -> None:
        for start in range(0, len(docs), _BATCH):
            batch = docs[start : start + _BATCH]
            dense = self.embedder.embed([d.text for d in batch]) if self.embedder else None
            points = []
            for i, doc in enumerate(batch):
                indices, values = sparse_document(doc.text)
                vector: dict[str, object] = {SPARSE: models.SparseVector(indices=indices, values=values)}
                if dense is not None:
                    vector[DENSE] = dense[i]
                points.append(models.PointStruct(id=point_id(doc.kind, doc.id), vector=vector, payload=doc.payload()))
            self.client.upsert(self.collection, points, wait=True)

    def delete(self, keys: Sequence[tuple[Kind, str]]) -> None:
        if keys:
            ids = [point_id(k, i) for k, i in keys]
            self.client.delete(self.collection, models.PointIdsList(points=ids), wait=True)

    def search(self, text: str, kind: Kind, limit: int) -> list[IndexHit]:
        flt = models.Filter(must=[models.FieldCondition(key="kind", match=models.MatchValue(value=kind))])
        indices, values = sparse_query(text)
        if not indices and self.embedder is None:
            return []
        sparse = models.SparseVector(indices=indices, values=values)
        if self.embedder is None:
            res = self.client.query_points(self.collection, query=sparse, using=SPARSE, query_filter=flt,
                                           limit=limit, with_payload=True)
        elif self.mode == "dense":
            res = self.client.query_points(self.collection, query=self.embedder.embed([text])[0], using=DENSE,
                                           query_filter=flt, limit=limit, with_payload=True,
                                           score_threshold=self.min_score)
        else:
            dense = self.embedder.embed([text])[0]
            prefetch = [models.Prefetch(query=dense, using=DENSE, limit=limit * 4, filter=flt,
                                        score_threshold=self.min_score)]
            if indices:
                prefetch.insert(0, models.Prefetch(query=sparse, using=SPARSE, limit=limit * 4, filter=flt))
            res = self.client.query_points(self.collection, limit=limit, with_payload=True,
                                           query=models.RrfQuery(rrf=models.Rrf(k=RRF_K)), prefetch=prefetch)
        return [IndexHit(kind=p.payload["kind"], id=p.payload["id"], score=p.score,
                         source_run=p.payload.get("source_run", "")) for p in res.points]

    def count(self) -> int:
        return self.client.count(self.collection, exact=True).count


def make(root: Path, config: MemoryConfig, **options: Any) -> QdrantIndex:
    """A server by `qdrant_url`, else qdrant-client's local mode in the memory folder `root` (memory.backends)."""
    if config.qdrant_url:
        return QdrantIndex(url=config.qdrant_url, collection=config.qdrant_collection, **options)
    return QdrantIndex(path=root / ".index" / "qdrant", collection=config.qdrant_collection, **options)
