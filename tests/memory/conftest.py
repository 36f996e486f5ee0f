"""Fixtures of the memory tests: scripted models from YAML files, memory roots, a clock."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from memory_helpers import Clock

from tether.memory.config import MemoryConfig
from tether.memory.cycle import MemoryCycle
from tether.runtime.models.scripted import ScriptedChatModel


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def scripted(tmp_path: Path) -> Callable[..., ScriptedChatModel]:
    """Write a YAML script under tmp_path and load it, as a user would."""
    counter = iter(range(10_000))

    def make(**responses: Any) -> ScriptedChatModel:
        path = tmp_path / f"script-{next(counter)}.yaml"
        norm = {
            site: [json.dumps(a) if isinstance(a, dict) else a for a in answers]
            if isinstance(answers, list)
            else answers
            for site, answers in responses.items()
        }
        path.write_text(yaml.safe_dump({"responses": norm}, allow_unicode=True), encoding="utf-8")
        return ScriptedChatModel.from_file(path)

    return make


@pytest.fixture
def config() -> MemoryConfig:
    return MemoryConfig(rule_trial_rate=0.0)


@pytest.fixture
def cycle(tmp_path: Path, config: MemoryConfig, clock: Clock) -> MemoryCycle:
    return MemoryCycle(tmp_path / "memory", config, clock=clock)


