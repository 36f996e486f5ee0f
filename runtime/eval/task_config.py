"""A Harbor task's `task.toml`: the timeouts and resources Tether honours when it runs the task.

Read: `[agent] timeout_sec` (the run's time budget), `[verifier] timeout_sec`
(tests/test.sh's limit), `[environment] cpus`, `memory_mb` or `memory`
(`"4G"`), `build_timeout_sec`. Every other key is Harbor's or the task
author's and is left alone. A value of the wrong type or out of range is one
line naming the file and the key.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tether.common.errors import ConfigError

MAX_TASK_TOML_BYTES = 256 * 1024
_MEMORY = re.compile(r"^([1-9][0-9]{0,8})\s*([kmgt]?)i?b?$", re.I)
_MIB = {"": 1 / (1 << 20), "k": 1 / 1024, "m": 1, "g": 1024, "t": 1 << 20}


class TaskSettings(BaseModel):
    """What a task asks for; None where it says nothing (Tether's own settings apply)."""

    agent_timeout_s: float | None = None
    verifier_timeout_s: float | None = None
    build_timeout_s: float | None = None
    cpus: float | None = None
    memory_mb: int | None = None


def _number(path: Path, key: str, value: Any, limit: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= limit:
        msg = f"{path}: {key} must be a number above 0 and at most {limit:g}, got {value!r}; fix task.toml"
        raise ConfigError(msg)
    return float(value)


def _memory(path: Path, env: dict[str, Any]) -> int | None:
    if "memory_mb" in env:
        return int(_number(path, "environment.memory_mb", env["memory_mb"], 1 << 24))
    raw = env.get("memory")
    if raw is None:
        return None
    m = _MEMORY.match(str(raw).strip()) if isinstance(raw, str) else None
    if m is None:
        msg = f"{path}: environment.memory must be a size like \"4G\" or \"512M\", got {raw!r}; fix task.toml"
        raise ConfigError(msg)
    mib = int(int(m.group(1)) * _MIB[m.group(2).lower()])
    if not 6 <= mib <= 1 << 24:
        msg = f"{path}: environment.memory {raw!r} is out of range (6 MiB to 16 TiB); fix task.toml"
        raise ConfigError(msg)
    return mib


def load_settings(folder: Path) -> TaskSettings:
    """The settings of the task in `folder`; all None when it has no task.toml."""
    path = folder / "task.toml"
    if not path.is_file():
        return TaskSettings()
    raw = path.read_bytes()[: MAX_TASK_TOML_BYTES + 1]
    if len(raw) > MAX_TASK_TOML_BYTES:
        msg = f"{path} is over {MAX_TASK_TOML_BYTES // 1024} KiB; a task.toml is a page of settings"
        raise ConfigError(msg)
    try:
        data = tomllib.loads(raw.decode("utf-8", errors="replace"))
    except (tomllib.TOMLDecodeError, RecursionError) as e:
        msg = f"{path}: invalid TOML ({e}); fix task.toml"
        raise ConfigError(msg) from e
    sections = {name: data.get(name) if isinstance(data.get(name), dict) else {}
                for name in ("agent", "verifier", "environment")}
    agent, verifier, env = sections["agent"], sections["verifier"], sections["environment"]
    week = 7 * 24 * 3600.0
    return TaskSettings(
        agent_timeout_s=_number(path, "agent.timeout_sec", agent["timeout_sec"], week) if "timeout_sec" in agent
        else None,
        verifier_timeout_s=_number(path, "verifier.timeout_sec", verifier["timeout_sec"], week)
        if "timeout_sec" in verifier else None,
        build_timeout_s=_number(path, "environment.build_timeout_sec", env["build_timeout_sec"], week)
        if "build_timeout_sec" in env else None,
        cpus=_number(path, "environment.cpus", env["cpus"], 1024) if "cpus" in env else None,
        memory_mb=_memory(path, env),
    )
