"""LessonIndex on Qdrant Edge: the Qdrant engine in-process, stored in a folder.

Parts: `EdgeIndex`. Sparse BM25 vectors use the engine's IDF modifier; with an
embedder, a dense cosine vector is added, and a search is dense alone
(`mode="dense"`) or the two fused by RRF (`mode="hybrid"`); dense matches
below `min_score` (cosine) are dropped. A keyword index on the payload field
`kind` keeps the kind filter cheap for dense search (17 ms -> 3 ms at 10k).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from tether.memory.config import MemoryConfig
from tether.memory.dense import Embedder
from tether.memory.errors import IndexBusyError, IndexUnavailableError
from tether.memory.index import BUSY_WAIT_S, DENSE, RRF_K, SPARSE, IndexDoc, IndexHit, Kind, SearchMode, point_id
from tether.memory.text import sparse_document, sparse_query

_BATCH = 512
HEADROOM = 64 << 20
"""Free bytes kept beyond the index's holes: room for a new WAL or segment file."""
FRESH = 160 << 20
"""What a new shard may come to fill (its files are sparse: ~140 MB apparent, ~200 KB written)."""


def _holes(path: Path) -> int:
    """Bytes the engine could still allocate by writing into its sparse, memory-mapped files."""
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                st = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            total += max(0, st.st_size - st.st_blocks * 512)
    return total


def ensure_space(path: Path, need: int) -> None:
    """Refuse to map or write the index unless `need` bytes are free on its disk.

    The engine writes through memory maps: on a full disk a write into a
    sparse page is a SIGBUS that kills the process, not an exception, so the
    space is checked before the engine touches the files.
    """
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        free = shutil.disk_usage(probe).free
    except OSError as e:
        msg = f"cannot check free space for the memory index at {path}: {e.strerror or e}"
        raise IndexUnavailableError(msg) from e
    if free < need:
        msg = (f"not enough free space for the memory index at {path}: {free >> 20} MiB free, "
               f"{(need >> 20) + 1} MiB needed; free some space (the index is rebuilt from markdown afterwards)")
        raise IndexUnavailableError(msg)


class EdgeIndex:
    """Qdrant Edge shard under `path` (default backend)."""

    name = "edge"

    def __init__(self, path: Path, embedder: Embedder | None = None, mode: SearchMode = "hybrid",
                 min_score: float | None = None) -> None:
        self.path = path
        self.embedder = embedder
        self.mode = mode
        self.min_score = min_score
        self._shard: qe.EdgeShard | None = None

    def _config(self) -> qe.EdgeConfig:
        dense = None
        if self.embedder is not None:
            dense = {DENSE: qe.EdgeVectorParams(size=self.embedder.dim, distance=qe.Distance.Cosine)}
        return qe.EdgeConfig(
            vectors=dense, sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)}
        )

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
        ensure_space(self.path, _holes(self.path) + HEADROOM)
        deadline = time.monotonic() + BUSY_WAIT_S
        while True:
            try:
                shard = qe.EdgeShard.load(str(self.path), self._config())
                shard.info()
                break
            except Exception as e:  # the engine raises plain errors for every kind of damage
                if "WouldBlock" not in str(e):
                    msg = f"edge index at {self.path} cannot be loaded ({e}); it will be rebuilt from markdown"
                    raise IndexUnavailableError(msg) from e
                if time.monotonic() > deadline:  # never rebuilt: that would remove the files another process uses
                    msg = (f"the memory index at {self.path} is held by another tether process for over "
                           f"{BUSY_WAIT_S:.0f} s; try again when it has finished")
                    raise IndexBusyError(msg) from e
                time.sleep(0.02)  # another process holds it open between its sessions: released within KEEP_OPEN_S
        self._shard = shard
        try:
            self._index_kind()
        except Exception as e:  # a shard that loads but cannot take an update is damaged too
            self.close()
            msg = f"edge index at {self.path} cannot be updated ({e}); it will be rebuilt from markdown"
            raise IndexUnavailableError(msg) from e

    def reset(self) -> None:
        """Start an empty shard; a failure leaves no half-made shard behind to fill the disk."""
        self.close()
        shutil.rmtree(self.path, ignore_errors=True)
        for folder in (self.path.parent, self.path):
            if folder.exists() and not folder.is_dir():
                msg = (
                    f"{folder} is a file where the memory index folder belongs; remove it (`rm {folder}`) and the "
                    "index is rebuilt from markdown"
                )
                raise IndexUnavailableError(msg)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            msg = (
                f"cannot create the memory index folder {self.path.parent}: {e.strerror or e}; check that the memory "
                "folder is writable"
            )
            raise IndexUnavailableError(msg) from e
        ensure_space(self.path, FRESH + HEADROOM)
        try:
            self._shard = qe.EdgeShard.create(str(self.path), self._config())
            self._index_kind()
        except Exception as e:  # the engine raises plain errors
            self.close()
            shutil.rmtree(self.path, ignore_errors=True)
            msg = f"cannot create the memory index at {self.path} ({e}); check free space and permissions"
            raise IndexUnavailableError(msg) from e

    def _index_kind(self) -> None:
        """Keyword index on `kind` (every search filters on it); added to shards made before it existed."""
        if "kind" not in self.shard.info().payload_schema:
            self.shard.update(qe.UpdateOperation.create_field_index("kind", qe.PayloadSchemaType.Keyword))

    def flush(self) -> None:
        if self._shard is not None:
            self._shard.flush()

    def close(self) -> None:
        if self._shard is not None:
            shard, self._shard = self._shard, None
            shard.flush()
            shard.close()

    def upsert(self, docs: Sequence[IndexDoc]) -> None:
        if docs:
            ensure_space(self.path, _holes(self.path) + HEADROOM)
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
        sparse = qe.Query.Nearest(qe.SparseVector(indices, values), using=SPARSE) if indices else None
        if self.embedder is None:
            if sparse is None:
                return []
            request = qe.QueryRequest(limit=limit, query=sparse, filter=flt, with_payload=True)
        else:
            dense = qe.Query.Nearest(self.embedder.embed([text])[0], using=DENSE)
            if self.mode == "dense":
                request = qe.QueryRequest(limit=limit, query=dense, filter=flt, with_payload=True,
                                          score_threshold=self.min_score)
            else:
                prefetches = [qe.Prefetch(query=dense, limit=limit * 4, filter=flt, score_threshold=self.min_score)]
                if sparse is not None:
                    prefetches.insert(0, qe.Prefetch(query=sparse, limit=limit * 4, filter=flt))
                request = qe.QueryRequest(limit=limit, query=qe.Fusion.Rrf(k=RRF_K), with_payload=True,
                                          prefetches=prefetches)
        return [IndexHit(kind=p.payload["kind"], id=p.payload["id"], score=p.score,
                         source_run=p.payload.get("source_run", "")) for p in self.shard.query(request)]

    def count(self) -> int:
        return self.shard.info().points_count


def make(root: Path, config: MemoryConfig, **options: Any) -> EdgeIndex:
    """The edge index of the memory folder `root` (memory.backends)."""
    return EdgeIndex(root / ".index" / "edge", **options)
