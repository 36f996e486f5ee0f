"""`ollama:NAME`: a model an Ollama server holds (its native API)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from tether.runtime.models.registry import PROVIDERS, missing_extra

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from tether.runtime.config import ModelConfig


DEFAULT = "http://127.0.0.1:11434"


def endpoint(name: str, config: ModelConfig, environ: Mapping[str, str]) -> str:  # noqa: ARG001
    """config's base_url, else OLLAMA_HOST (what the ollama client reads), else the local default."""
    url = config.base_url or environ.get("OLLAMA_HOST") or DEFAULT
    return (url if "://" in url else f"http://{url}").rstrip("/")


def build(name: str, config: ModelConfig, environ: Mapping[str, str]) -> BaseChatModel:
    try:
        from langchain_ollama import ChatOllama
    except ImportError as e:
        raise missing_extra(PROVIDERS["ollama"]) from e
    return ChatOllama(model=name, base_url=endpoint(name, config, environ), temperature=config.temperature,
                      num_predict=config.max_tokens)
