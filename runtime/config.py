"""Tether's configuration: one validated object, read once, here.

Sources, later wins: built-in defaults, `tether.toml` in the user config
folder, `tether.toml` in the working folder, `TETHER_*` environment variables,
then `--home` on the command line. A nested key `[sandbox] image` is
`TETHER_SANDBOX__IMAGE` in the environment; values are parsed as TOML
literals when they parse (`true`, `3`, `"x"`, `[1, 2]`), else taken as text.

Values are typed strictly: a count must be a whole number (`true`, `3.0`
and `"3"` are refused), a switch `true` or `false`, a number a number; a
wrong type is one line naming the key, the value given and what it needs.
"""

from __future__ import annotations

import json
import logging
import os
import tomllib
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tether.common.budgets import RunBudgets
from tether.common.errors import ConfigError
from tether.common.files import read_text
from tether.common.limits import WorkspaceLimits
from tether.guardian.config import GuardianConfig
from tether.memory.config import MemoryConfig
from tether.runtime.network_config import NetworkConfig
from tether.sandbox.config import MAX_TIMEOUT_S, DockerSandboxConfig

log = logging.getLogger(__name__)

ENV_PREFIX = "TETHER_"
NOT_CONFIG = frozenset({"TETHER_REQUIRE_DOCKER", "TETHER_HOOK_SERVER"})
"""TETHER_* variables read by the test suite and scripts, not by the config."""
CONFIG_NAME = "tether.toml"
MAX_CONFIG_BYTES = 1 << 20
"""A tether.toml larger than this is refused (a config file is a page of settings)."""


class ModelConfig(BaseModel):
    """Which chat model plans, acts and revises memory."""

    model_config = ConfigDict(extra="forbid")

    spec: str | None = None
    """PROVIDER:NAME, one of the providers listed below (`--model` overrides)."""
    base_url: str | None = None
    """Endpoint of an OpenAI-compatible or Ollama server."""
    api_key_env: str | None = None
    """Name of the environment variable that holds the API key (never the key itself)."""
    temperature: float = 0.0
    """Sampling temperature."""
    max_tokens: int = Field(default=4096, gt=0)
    """Completion token cap (sent as both max_tokens and max_completion_tokens)."""
    timeout_s: float = Field(default=120.0, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)
    """Per-call timeout."""
    max_answer_bytes: int = Field(default=1 << 20, gt=0, le=1 << 30)
    """Largest model answer accepted (text and tool-call arguments, in bytes); a larger one is refused with a line
    (its head and tail are kept for `tether show`) and is never put into a later prompt."""


class RunConfig(RunBudgets):
    """Budgets and bounds of one task."""

    model_config = ConfigDict(extra="forbid")

    verify: list[str] = Field(default_factory=list)
    """Checks the person gives (`tether run --verify CMD` adds to them): the gate runs each in a fresh shell after the
    run and on the pre-run copy; when given, they decide R07/R08."""
    verify_timeout_s: float = Field(default=120.0, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)
    """Timeout of each check the gate re-runs itself."""
    accept_self_verified: bool = False
    """Take a run whose only proof is checks it wrote itself (no check of yours, none of the project's tests shows
    the change) as `success`; by default it ends `self-verified` (exit 5)."""
    max_goal_bytes: int = Field(default=16_384, gt=0)
    """Largest goal accepted (UTF-8 bytes); longer material belongs in a workspace file the goal names."""
    host_code: Literal["review", "undo"] = "review"
    """What happens to changes the run made to places that run code on your machine when you use the folder (git
    config and hooks, `.gitattributes` drivers, `.pth` and environments, direnv, editor and agent config, install
    scripts; docs/runs.md): `review` leaves them and the run ends `needs-review`, naming each; `undo` puts each back
    as it was before the run once the run ends (bytecode that does not match its source is removed either way)."""
    keep_checkpoints: Literal["last", "all"] = "last"
    """Checkpoints a finished run keeps in the home's checkpoint database: `last` keeps only its final one (what
    `tether resume` reports a finished run from; `tether show` and `report` read run.json and the journal), `all`
    keeps every one. A run still going, paused or interrupted keeps all of them; `tether gc` prunes a whole home."""


class TrustConfig(BaseModel):
    """How approvals turn into standing permissions."""

    model_config = ConfigDict(extra="forbid")

    promote_after: int = Field(default=5, gt=0)
    """Approvals needed before an action kind is auto-approved."""
    promote_rate: float = Field(default=0.90, gt=0, le=1)
    """Minimum approval rate for promotion."""
    min_shadow_agreement: float | None = None
    """If set, promotion also needs this auto-approver/person agreement in shadow audits."""


class TetherConfig(BaseModel):
    """Everything Tether reads from files and environment."""

    model_config = ConfigDict(extra="forbid")

    home: Path = Field(default_factory=lambda: Path(platformdirs.user_data_dir("tether")))
    """Holds runs, memory, checkpoints and the trust ledger (TETHER_HOME)."""
    model: ModelConfig = Field(default_factory=ModelConfig)
    run: RunConfig = Field(default_factory=RunConfig)
    sandbox: DockerSandboxConfig = Field(default_factory=DockerSandboxConfig)
    guardian: GuardianConfig = Field(default_factory=GuardianConfig)
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    trust: TrustConfig = Field(default_factory=TrustConfig)
    network: NetworkConfig = Field(default_factory=NetworkConfig)
    """Which hosts commands may reach through the egress proxy, and when (docs/network.md)."""
    workspace: WorkspaceLimits = Field(default_factory=WorkspaceLimits)
    """Host-side bounds: workspace size, bytes hashed per file, pass deadlines, snapshots kept."""

    @property
    def runs_dir(self) -> Path:
        return self.home / "runs"

    @property
    def memory_dir(self) -> Path:
        return self.home / "memory"

    @property
    def checkpoint_db(self) -> Path:
        return self.home / "checkpoints.sqlite"

    @property
    def ledger_path(self) -> Path:
        return self.home / "trust.toml"


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _read_toml(path: Path) -> dict[str, Any]:
    text = read_text(path, ConfigError, "fix the file or remove it", max_bytes=MAX_CONFIG_BYTES)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        msg = f"{path}: invalid TOML ({e}); fix the file or remove it"
        raise ConfigError(msg) from e
    except RecursionError as e:  # tomllib recurses once per nesting level
        msg = f"{path}: values nested too deep to read; fix the file or remove it"
        raise ConfigError(msg) from e


def _env_value(raw: str, name: str = "") -> Any:
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw
    except RecursionError as e:
        msg = f"${name}: its value is nested too deep to read; unset it or give a plain value"
        raise ConfigError(msg) from e


def _from_env(environ: dict[str, str]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX) or name in NOT_CONFIG or name.startswith(f"{ENV_PREFIX}TEST_"):
            continue
        parts = name[len(ENV_PREFIX):].lower().split("__")
        node = tree
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = raw if parts == ["home"] else _env_value(raw, name)
    return tree


def config_files(cwd: Path | None = None) -> list[Path]:
    """Config files in the order they are applied (later wins)."""
    user = Path(platformdirs.user_config_dir("tether")) / CONFIG_NAME
    local = (cwd or Path.cwd()) / CONFIG_NAME
    return [p for p in (user, local) if p.is_file()]


def load_config(
    home: Path | None = None,
    *,
    cwd: Path | None = None,
    environ: dict[str, str] | None = None,
    overrides: dict[str, Any] | None = None,
) -> TetherConfig:
    """Read, merge and validate the configuration; raise ConfigError naming the fix."""
    data: dict[str, Any] = {}
    for path in config_files(cwd):
        data = _merge(data, _read_toml(path))
    data = _merge(data, _from_env(dict(os.environ if environ is None else environ)))
    data = _merge(data, overrides or {})
    if home is not None:
        data["home"] = str(home)
    if isinstance(data.get("home"), str) and not data["home"].strip():
        msg = (
            "the Tether home is empty (TETHER_HOME= or --home ''); set it to a folder, or unset TETHER_HOME for the "
            "default"
        )
        raise ConfigError(msg)
    try:  # as JSON, strictly: no `true` for a count, no "3" for a number, but text for paths
        config = TetherConfig.model_validate_json(json.dumps(data, default=str), strict=True)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        env = ENV_PREFIX + "__".join(str(p) for p in first["loc"]).upper()
        msg = f"config key '{where}' (env {env}): {_why(first)}; see docs/config.md"
        raise ConfigError(msg) from e
    config = config.model_copy(update={"home": config.home.expanduser().resolve()})
    if config.home.exists() and not config.home.is_dir():
        msg = f"the Tether home {config.home} is not a folder; set TETHER_HOME (or --home) to a folder"
        raise ConfigError(msg)
    _log_weakened(config)
    return config


NEEDS = {"int_type": "a whole number (e.g. 20)", "bool_type": "true or false", "float_type": "a number (e.g. 1.5)",
         "string_type": "text in quotes", "list_type": "a list (e.g. [\"a\"])", "dict_type": "a table of settings"}


def _why(error: Any) -> str:
    """One line: what the key needs and what it was given (`true` for a count is a boolean, not 1)."""
    need = NEEDS.get(error["type"])
    given = error.get("input")
    kind = {bool: "a boolean", int: "a whole number", float: "a number", str: "text", list: "a list",
            dict: "a table"}.get(type(given), type(given).__name__)
    shown = json.dumps(given, default=str)[:60].replace("\n", " ") if not isinstance(given, dict) else "{...}"
    if need:
        return f"needs {need}, got {shown} ({kind})"
    return f"{error['msg']} (got {shown})"


def check_home(config: TetherConfig) -> None:
    """Create the home if missing and make sure Tether can write it (one-line ConfigError if not)."""
    home = config.home
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        msg = (
            f"cannot create the Tether home {home}: {e.strerror or e}; set TETHER_HOME (or --home) to a writable folder"
        )
        raise ConfigError(msg) from e
    if not os.access(home, os.W_OK | os.X_OK):
        msg = (f"the Tether home {home} is not writable (read-only disk or permissions); "
               "set TETHER_HOME (or --home) to a writable folder")
        raise ConfigError(msg)


def _log_weakened(config: TetherConfig) -> None:
    defaults = DockerSandboxConfig()
    for field in DockerSandboxConfig.model_fields:
        value, default = getattr(config.sandbox, field), getattr(defaults, field)
        if value != default:
            log.warning("sandbox.%s overridden: %r (default %r)", field, value, default)
