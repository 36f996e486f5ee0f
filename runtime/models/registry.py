"""Chat models from config: scripted, OpenAI-compatible, Ollama, Anthropic.

Provider packages are optional extras, imported only when chosen.
"""

from __future__ import annotations

import os
from pathlib import Path

from langchain_core.language_models import BaseChatModel
from tether.common.errors import ConfigError
from tether.runtime.config import ModelConfig
from tether.runtime.models.scripted import ScriptedChatModel

PROVIDERS = ("scripted", "openai", "ollama", "anthropic")


EXTRAS = {"openai": "langchain-openai", "ollama": "langchain-ollama", "anthropic": "langchain-anthropic"}


def _missing_extra(provider: str) -> ConfigError:
    msg = f"model provider '{provider}' needs {EXTRAS[provider]}: pip install 'tether[{provider}]'"
    return ConfigError(msg)


def _api_key(config: ModelConfig, environ: dict[str, str]) -> str | None:
    if not config.api_key_env:
        return None
    key = environ.get(config.api_key_env)
    if not key:
        msg = f"model.api_key_env names ${config.api_key_env}, which is not set; export it or change the config"
        raise ConfigError(msg)
    return key


def build_chat_model(config: ModelConfig, environ: dict[str, str] | None = None) -> BaseChatModel:
    """Return the chat model `config.spec` names, or raise ConfigError naming the fix."""
    env = dict(os.environ if environ is None else environ)
    if not config.spec:
        msg = "no model configured: pass --model scripted:PATH (or openai:NAME, ...) or set [model] spec in tether.toml"
        raise ConfigError(msg)
    provider, sep, name = config.spec.partition(":")
    if not sep or not name or provider not in PROVIDERS:
        msg = f"model spec '{config.spec}' is not PROVIDER:NAME with PROVIDER one of {', '.join(PROVIDERS)}"
        raise ConfigError(msg)
    if provider == "scripted":
        return ScriptedChatModel.from_file(Path(name).expanduser())
    if provider == "openai":
        try:
            from langchain_openai import ChatOpenAI
        except ImportError as e:
            raise _missing_extra(provider) from e
        # Some servers (llama.cpp, older vLLM) ignore max_completion_tokens: send both.
        return ChatOpenAI(
            model=name,
            base_url=config.base_url,
            api_key=_api_key(config, env) or "not-needed",
            temperature=config.temperature,
            max_completion_tokens=config.max_tokens,
            extra_body={"max_tokens": config.max_tokens},
            timeout=config.timeout_s,
        )
    if provider == "ollama":
        try:
            from langchain_ollama import ChatOllama
        except ImportError as e:
            raise _missing_extra(provider) from e
        return ChatOllama(
            model=name,
            base_url=config.base_url,
            temperature=config.temperature,
            num_predict=config.max_tokens,
        )
    try:
        from langchain_anthropic import ChatAnthropic
    except ImportError as e:
        raise _missing_extra(provider) from e
    return ChatAnthropic(
        model=name,
        api_key=_api_key(config, env),
        base_url=config.base_url,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        timeout=config.timeout_s,
    )
