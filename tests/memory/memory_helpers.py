"""Helpers of the memory tests: a hand-moved clock, run records, the descending-sort episode."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from tether.memory.cycle import MemoryCycle
from tether.memory.run import FailedCommand, GateSummary, RunRecord, Turn
from tether.runtime.models.scripted import ScriptedChatModel

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw: float) -> None:
        self.now += timedelta(**kw)


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


_TOPICS = ["keep a backup copy of the input", "check the file encoding", "strip blank lines",
           "count the lines first", "confirm numeric columns", "remove duplicate rows",
           "trim trailing whitespace", "verify file permissions"]


def concurrent_writer(root: str, worker: int, lesson_id: str, runs: int) -> None:
    """One process of the concurrency test: `runs` runs that revise a shared lesson and add one each."""
    from pathlib import Path

    import yaml

    from tether.memory.config import MemoryConfig

    confirmed = {"verdict": "confirmed", "evidence": ["Largest numbers must come first."], "lesson": ""}
    for n in range(runs):
        script = Path(root).parent / f"w{worker}-{n}.yaml"
        topic = _TOPICS[(worker - 1) * runs + n]
        new = {"lessons": [{"title": f"w{worker} n{n}", "insight": f"Before sorting, {topic}."}]}
        script.write_text(yaml.safe_dump({"responses": {
            "compile": ["c"], "revise": [json.dumps(confirmed)], "lessons": [json.dumps(new)]}}))
        model = ScriptedChatModel.from_file(script)
        cycle = MemoryCycle(Path(root), MemoryConfig())
        goal = f"Sort the numbers in w{worker}-{n}.txt in descending order"
        rec = record(f"w{worker}-run-{n}", goal, turns=[(f"per {lesson_id}", f"sort -rn w{worker}-{n}.txt", 0, "")])
        cycle.after_run(rec, model, cycle.read(goal))
