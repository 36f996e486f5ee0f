"""`anthropic:NAME`: an Anthropic model (key from the variable `model.api_key_env` names)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from tether.runtime.models.registry import PROVIDERS, api_key, missing_extra

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from tether.runtime.config import ModelConfig


DEFAULT = "https://api.anthropic.com"


def endpoint(name: str, config: ModelConfig, environ: Mapping[str, str]) -> str:  # noqa: ARG001
    """config's base_url, else ANTHROPIC_BASE_URL / ANTHROPIC_API_URL (what the clients read), else the public API."""
    return (config.base_url or environ.get("ANTHROPIC_BASE_URL") or environ.get("ANTHROPIC_API_URL")
            or DEFAULT).rstrip("/")


def build(name: str, config: ModelConfig, environ: Mapping[str, str]) -> BaseChatModel:
    try:
        from langchain_anthropic import ChatAnthropic
    except ImportError as e:
        raise missing_extra(PROVIDERS["anthropic"]) from e
    return ChatAnthropic(model=name, api_key=api_key(config, environ), base_url=endpoint(name, config, environ),
                         temperature=config.temperature, max_tokens=config.max_tokens, timeout=config.timeout_s)
