"""`anthropic:NAME`: an Anthropic model (key from the variable `model.api_key_env` names)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from tether.runtime.models.registry import PROVIDERS, api_key, missing_extra

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from tether.runtime.config import ModelConfig


def build(name: str, config: ModelConfig, environ: Mapping[str, str]) -> BaseChatModel:
    try:
        from langchain_anthropic import ChatAnthropic
    except ImportError as e:
        raise missing_extra(PROVIDERS["anthropic"]) from e
    return ChatAnthropic(model=name, api_key=api_key(config, environ), base_url=config.base_url,
                         temperature=config.temperature, max_tokens=config.max_tokens, timeout=config.timeout_s)
