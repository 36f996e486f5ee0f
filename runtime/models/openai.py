"""`openai:NAME`: any OpenAI-compatible server (vLLM, llama.cpp, LM Studio, Ollama's /v1, hosted APIs)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from tether.runtime.models.registry import PROVIDERS, api_key, missing_extra

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from tether.runtime.config import ModelConfig


DEFAULT = "https://api.openai.com/v1"


def endpoint(name: str, config: ModelConfig, environ: Mapping[str, str]) -> str:  # noqa: ARG001
    """config's base_url, else OPENAI_API_BASE / OPENAI_BASE_URL (what LangChain and the openai client read)."""
    return (config.base_url or environ.get("OPENAI_API_BASE") or environ.get("OPENAI_BASE_URL") or DEFAULT).rstrip("/")


def build(name: str, config: ModelConfig, environ: Mapping[str, str]) -> BaseChatModel:
    try:
        from langchain_openai import ChatOpenAI
    except ImportError as e:
        raise missing_extra(PROVIDERS["openai"]) from e
    # Some servers (llama.cpp, older vLLM) ignore max_completion_tokens: send both.
    return ChatOpenAI(
        model=name,
        base_url=endpoint(name, config, environ),  # explicit: the endpoint the run records is the one used
        api_key=api_key(config, environ) or "not-needed",
        temperature=config.temperature,
        max_completion_tokens=config.max_tokens,
        extra_body={"max_tokens": config.max_tokens},
        timeout=config.timeout_s,
    )
