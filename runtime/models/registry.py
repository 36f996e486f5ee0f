"""Chat model providers: one module each, one mapping, and the one place a run's model is built.

Parts: `Provider` (name, module, the extra it needs, a line of help),
`PROVIDERS` (the mapping every list of providers is generated from: `--model`
help, docs/config.md), `spec_help()`, `build_chat_model(config)`,
`endpoint_of(config)` (where a spec's conversation goes: the base URL the
provider is built with, from config or the provider's own environment
variable, or its public default) and `model_for_run(config, meta)`, which
builds a run's model only when it would talk to the endpoint the run
recorded. A provider module exposes `build(name, config, environ) ->
BaseChatModel` and `endpoint(name, config, environ) -> str`, and is imported
only when chosen; the model must support tool calling (`bind_tools`): the
planner, actor, replanner and summarizer all answer through tools. A
provider of the person's own is named by a dotted path:
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


def endpoint_of(config: ModelConfig, environ: Mapping[str, str] | None = None) -> str:
    """Where `config.spec`'s conversation goes (the provider's base URL, or the scenario file); "" when unknown."""
    if not config.spec:
        return ""
    provider_name, _, name = config.spec.partition(":")
    provider = PROVIDERS.get(provider_name)
    env = dict(os.environ if environ is None else environ)
    if provider is None:  # a provider of the person's own: only what config says
        return config.base_url or ""
    try:
        module = importlib.import_module(provider.module)
    except ImportError as e:
        raise missing_extra(provider) from e
    return str(module.endpoint(name, config, env))


def model_for_run(config: TetherConfig, meta: Mapping[str, Any], environ: Mapping[str, str] | None = None
                  ) -> BaseChatModel:
    """The chat model a run was started with (its recorded spec and endpoint), built from today's settings.

    Raises:
        ConfigError: today's config or environment would send the run's conversation to another endpoint than
            the one it recorded (both named), or the run recorded none; `--model` chooses the model again.
    """
    model_config = config.model.model_copy(update={"spec": meta["model_spec"]})
    check_endpoint(model_config, meta, environ)
    return build_chat_model(model_config, environ)


def check_endpoint(config: ModelConfig, meta: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> None:
    """Refuse, naming both, when the run's recorded endpoint is not where its model would talk now."""
    spec, run_id = meta["model_spec"], meta.get("run_id", "?")
    now = endpoint_of(config.model_copy(update={"spec": spec}), environ)
    recorded = meta.get("model_endpoint")
    if recorded is None and spec.partition(":")[0] == "scripted":
        return  # a scenario file sends nothing anywhere
    if recorded is None:
        msg = (f"run {run_id} does not record where its model ({spec}) was served (made by an older Tether); "
               f"today it would go to {now or 'an endpoint Tether cannot tell'}; pass --model {spec} to continue "
               "with that, or another --model")
        raise ConfigError(msg)
    if now != recorded:
        msg = (f"run {run_id} talked to {spec} at {recorded or 'an endpoint its provider chose'}, but this config "
               f"and environment point it at {now or 'an endpoint its provider chooses'}; set [model] base_url (or the "
               f"provider's variable) back to {recorded or 'what it was'}, or pass --model to choose the model again")
        raise ConfigError(msg)
