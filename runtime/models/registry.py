"""Chat model providers: one module each, one mapping, and the one place a run's model is built.

Parts: `Provider` (name, module, the extra it needs, a line of help),
`PROVIDERS` (the mapping every list of providers is generated from: `--model`
help, docs/config.md), `spec_help()`, `build_chat_model(config)` and
`model_for_run(config, meta)`. A provider module exposes
`build(name, config, environ) -> BaseChatModel` and is imported only when
chosen; the model must support tool calling (`bind_tools`): the planner,
actor, replanner and summarizer all answer through tools. A provider of the person's own is named by a dotted path:
`--model mypkg.chat:build:NAME` calls `mypkg.chat.build(NAME, config, environ)`.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether.common.errors import ConfigError

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from tether.runtime.config import ModelConfig, TetherConfig


@dataclass(frozen=True)
class Provider:
    name: str
    module: str
    """Module with `build(name, config, environ)`."""
    extra: str | None
    """The optional dependency (`pip install 'tether[EXTRA]'`) it needs; None when built in."""
    help: str
    """What NAME means for this provider."""
    arg: str = "NAME"
    """How `--model` help names the part after the colon (`PATH` for a file)."""


PROVIDERS: dict[str, Provider] = {p.name: p for p in (
    Provider("scripted", "tether.runtime.models.scripted", None, "a YAML scenario replayed (tests, demos)", "PATH"),
    Provider("openai", "tether.runtime.models.openai", "openai", "a model of any OpenAI-compatible server"),
    Provider("ollama", "tether.runtime.models.ollama", "ollama", "a model an Ollama server holds"),
    Provider("anthropic", "tether.runtime.models.anthropic", "anthropic", "an Anthropic model"),
)}


def spec_help() -> str:
    """`scripted:PATH, openai:NAME, ...`: the specs `--model` accepts, from the mapping."""
    names = [f"{p.name}:{p.arg}" for p in PROVIDERS.values()]
    return ", ".join(names) + ", or MODULE:FUNCTION:NAME for a provider of your own"


def missing_extra(provider: Provider) -> ConfigError:
    msg = f"model provider '{provider.name}' needs its extra: pip install 'tether[{provider.extra}]'"
    return ConfigError(msg)


def api_key(config: ModelConfig, environ: Mapping[str, str]) -> str | None:
    """The API key from the variable `model.api_key_env` names (never from config itself)."""
    if not config.api_key_env:
        return None
    key = environ.get(config.api_key_env)
    if not key:
        msg = f"model.api_key_env names ${config.api_key_env}, which is not set; export it or change the config"
        raise ConfigError(msg)
    return key


def _builder(spec: str) -> tuple[Any, str, Provider | None]:
    """(build function, NAME, provider) for a spec; ConfigError naming the fix."""
    provider_name, sep, name = spec.partition(":")
    if "." in provider_name:  # MODULE:FUNCTION:NAME, a provider of the person's own
        attr, sep, name = name.partition(":")
        if not (sep and attr and name):
            msg = f"model spec '{spec}' names a module; write MODULE:FUNCTION:NAME (e.g. mypkg.chat:build:my-model)"
            raise ConfigError(msg)
        try:
            return getattr(importlib.import_module(provider_name), attr), name, None
        except (ImportError, AttributeError) as e:
            msg = f"model spec '{spec}': cannot load {provider_name}:{attr} ({e}); check the module path"
            raise ConfigError(msg) from e
    provider = PROVIDERS.get(provider_name)
    if not sep or not name or provider is None:
        msg = f"model spec '{spec}' is not PROVIDER:NAME; use one of: {spec_help()}"
        raise ConfigError(msg)
    try:
        module = importlib.import_module(provider.module)
    except ImportError as e:
        raise missing_extra(provider) from e
    return module.build, name, provider


def build_chat_model(config: ModelConfig, environ: Mapping[str, str] | None = None) -> BaseChatModel:
    """Return the chat model `config.spec` names, or raise ConfigError naming the fix."""
    if not config.spec:
        msg = f"no model configured: pass --model ({spec_help()}) or set `spec` under [model] in tether.toml"
        raise ConfigError(msg)
    build, name, _ = _builder(config.spec)
    return build(name, config, dict(os.environ if environ is None else environ))


def model_for_run(config: TetherConfig, meta: Mapping[str, Any]) -> BaseChatModel:
    """The chat model a run was started with (its recorded spec), built from today's settings."""
    return build_chat_model(config.model.model_copy(update={"spec": meta["model_spec"]}))
