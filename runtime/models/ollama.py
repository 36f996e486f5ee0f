"""`ollama:NAME`: a model an Ollama server holds (its native API)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from tether.runtime.models.registry import PROVIDERS, missing_extra

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from tether.runtime.config import ModelConfig


def build(name: str, config: ModelConfig, environ: Mapping[str, str]) -> BaseChatModel:  # noqa: ARG001
    try:
        from langchain_ollama import ChatOllama
    except ImportError as e:
        raise missing_extra(PROVIDERS["ollama"]) from e
    return ChatOllama(model=name, base_url=config.base_url, temperature=config.temperature,
                      num_predict=config.max_tokens)
