"""The derived search index over the markdown corpus: its seam and its factory.

Parts: `IndexDoc` / `IndexHit` (what goes in and comes out), `LessonIndex`
(the Protocol every backend meets), `point_id`, `make_index` (picks the
backend from MemoryConfig through memory.backends and imports it only when chosen).

The index is a cache: a backend may be wiped and refilled from markdown at any
time (`MemoryStore.rebuild`). Backends hold their engine open between
`open()` and `close()`; the store opens them inside its file lock so two
processes never touch one engine at once.
"""

from __future__ import annotations

import importlib
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from tether.memory.backends import BACKENDS
from tether.memory.config import MemoryConfig

Kind = Literal["lesson", "run", "rule"]
SearchMode = Literal["hybrid", "dense"]
"""How a backend with an embedder searches: RRF of BM25 and dense, or dense alone.
Without an embedder it is BM25 alone. Sparse vectors are stored in every mode."""
SPARSE = "bm25"
DENSE = "dense"
RRF_K = 60
BUSY_WAIT_S = 30.0
"""How long `open` waits for an engine another process holds open (it releases it soon after its session)."""
_NS = uuid.UUID("6f1c1d1e-7e62-4c1b-9a52-0d5a8f7c3b10")


class IndexDoc(BaseModel):
    """One item to index: its kind, id, searchable text and provenance."""

    model_config = ConfigDict(extra="forbid")

    kind: Kind
    id: str
    text: str
    source_runs: list[str] = Field(default_factory=list)
    """Runs the item derives from (its own id for a run)."""

    def payload(self) -> dict[str, object]:
        return {"kind": self.kind, "id": self.id, "source_run": self.source_runs[0] if self.source_runs else "",
                "source_runs": self.source_runs}


class IndexHit(BaseModel):
    """One search result."""

    model_config = ConfigDict(extra="forbid")

    kind: Kind
    id: str
    score: float
    source_run: str = ""


def point_id(kind: Kind, item_id: str) -> str:
    """Stable point id (a UUID both engines accept) of an item."""
    return str(uuid.uuid5(_NS, f"{kind}:{item_id}"))


class LessonIndex(Protocol):
    """A searchable, rebuildable index of lessons, runs and rules."""

    name: str
    """Backend name, recorded in the index manifest."""

    def open(self) -> None:
        """Open the existing index; raise IndexUnavailableError if it is missing or corrupt."""
        ...

    def reset(self) -> None:
        """Drop everything and leave an empty, open index."""
        ...

    def flush(self) -> None:
        """Make every update so far durable, keeping the engine open."""
        ...

    def close(self) -> None:
        """Flush and release the engine."""
        ...

    def upsert(self, docs: Sequence[IndexDoc]) -> None:
        """Insert or replace items."""
        ...

    def delete(self, keys: Sequence[tuple[Kind, str]]) -> None:
        """Remove items by (kind, id); unknown keys are ignored."""
        ...

    def search(self, text: str, kind: Kind, limit: int) -> list[IndexHit]:
        """Best matches of `text` among items of `kind`, best first."""
        ...

    def count(self) -> int:
        """Number of indexed items."""
        ...


def make_index(root: Path, config: MemoryConfig) -> LessonIndex:
    """The backend the config asks for, stored under `<root>/.index/` unless it is a server."""
    embedder = None
    if config.uses_dense:
        from tether.memory.dense import load_embedder

        embedder = load_embedder()
    mode: SearchMode = "dense" if config.embeddings == "dense" else "hybrid"
    opts = {"embedder": embedder, "mode": mode, "min_score": config.dense_min_score}
    return importlib.import_module(BACKENDS[config.index]).make(root, config, **opts)
