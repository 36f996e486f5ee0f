"""Fixtures of the memory tests: scripted models from YAML, run records, memory roots."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from memory.config import MemoryConfig
from memory.cycle import MemoryCycle
from memory.run import FailedCommand, GateSummary, RunRecord, Turn
from runtime.scripted import ScriptedChatModel

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw: float) -> None:
        self.now += timedelta(**kw)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def scripted(tmp_path: Path) -> Callable[..., ScriptedChatModel]:
    """Write a YAML script under tmp_path and load it, as a user would."""
    counter = iter(range(10_000))

    def make(**responses: Any) -> ScriptedChatModel:
        path = tmp_path / f"script-{next(counter)}.yaml"
        norm = {site: [json.dumps(a) if isinstance(a, dict) else a for a in answers] if isinstance(answers, list) else answers
                for site, answers in responses.items()}
        path.write_text(yaml.safe_dump({"responses": norm}, allow_unicode=True), encoding="utf-8")
        return ScriptedChatModel.from_file(path)

    return make


@pytest.fixture
def config() -> MemoryConfig:
    return MemoryConfig(rule_trial_rate=0.0)


@pytest.fixture
def cycle(tmp_path: Path, config: MemoryConfig, clock: Clock) -> MemoryCycle:
    return MemoryCycle(tmp_path / "memory", config, clock=clock)


def record(run_id: str, goal: str, outcome: str = "success", turns: list[tuple[str, str, int, str]] = (),
           failed: list[tuple[str, str]] = (), **kw: Any) -> RunRecord:
    """A RunRecord from (reasoning, command, exit_code, output) turns and (tool, error) failures."""
    return RunRecord(
        run_id=run_id, goal=goal, outcome=outcome,
        turns=[Turn(step="s1", reasoning=r, command=c, exit_code=e, output=o) for r, c, e, o in turns],
        failed_commands=[FailedCommand(tool=t, command=f"{t} x", error=e) for t, e in failed],
        gate=GateSummary(passed=outcome == "success", failed=[] if outcome == "success" else ["R08"]),
        **kw,
    )


DESC_RUN = dict(
    run_id="run-desc", goal="Sort the numbers in data.txt in descending order",
    turns=[("Largest numbers must come first.", "sort -rn data.txt > out.txt", 0, ""),
           ("Check the result.", "cat out.txt", 0, "9\n5\n1")],
)
DESC_LESSON = {"lessons": [{"title": "Largest numbers first",
                            "insight": "Put the largest numbers first when sorting numbers.",
                            "applicability": "numeric sorting tasks"}]}


def learn_desc(cycle: MemoryCycle, scripted: Callable[..., ScriptedChatModel]) -> str:
    """Run the descending-sort episode through the cycle; return the lesson id it taught."""
    model = scripted(compile=["- Key decision: `sort -rn` put the largest numbers first."], lessons=[DESC_LESSON])
    report = cycle.after_run(record(**DESC_RUN), model)
    assert len(report.new_lessons) == 1, report
    return report.new_lessons[0]
