"""A run killed before its first checkpoint resumes from the start (nothing had run)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tether.common.events import ExecFinished, read_events
from tether.runtime.config import load_config
from tether.runtime.models.scripted import Script, ScriptedChatModel
from tether.runtime.run.runner import RunOptions, resume_run, start_run
from tether.sandbox.recording import RecordingSandbox

SCRIPT = {
    "goal": "g",
    "responses": {
        "planner": [
            {
                "tool_calls": [
                    {"name": "submit_plan", "args": {"steps": [{"id": "a", "description": "x", "verify": "true"}]}}
                ]
            }
        ],
        "actor": {
            "a": [
                {
                    "tool_calls": [
                        {"name": "run_shell", "args": {"command": "true"}},
                        {"name": "finish_step", "args": {"summary": "ok"}},
                    ]
                }
            ]
        },
        "summarizer": [{"tool_calls": [{"name": "submit_summary", "args": {"text": "done"}}]}],
    },
}


class Killed(BaseException):
    """Stands in for SIGKILL between the run's setup and its first checkpoint."""


def test_resume_before_the_first_checkpoint_starts_the_graph(tmp_path: Path) -> None:
    config = load_config(tmp_path / "home")
    (tmp_path / "ws").mkdir()
    options = RunOptions(goal="g", workspace=tmp_path / "ws", model_spec="scripted:test")

    def dies(*_: Any) -> RecordingSandbox:
        raise Killed

    with pytest.raises(Killed):
        start_run(config, options, model=ScriptedChatModel(script=Script.model_validate(SCRIPT)), sandbox_factory=dies)
    run_id = next(config.runs_dir.iterdir()).name
    boxes: list[RecordingSandbox] = []

    def factory(workspace: Path, *_: Any) -> RecordingSandbox:
        boxes.append(RecordingSandbox(workspace))
        return boxes[-1]

    t = time.time()
    record = resume_run(
        config, run_id, model=ScriptedChatModel(script=Script.model_validate(SCRIPT)), sandbox_factory=factory
    )
    assert [s["status"] for s in record.steps] == ["done"]
    assert "true" in boxes[0].commands
    events = read_events(config.runs_dir / run_id / "journal.jsonl")
    assert [e.cmd_id for e in events if isinstance(e, ExecFinished)] == ["a/0/0"]
    assert events[0].ts < t  # the budget clock starts at the original start
