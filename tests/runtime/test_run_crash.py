"""A run that crashes mid-graph (an unexpected error, a failing trust hook) ends in a consistent state."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tether.common.events import ApprovalRecorded, ExecFinished, VerdictRecorded, read_events
from tether.runtime.config import load_config
from tether.runtime.hooks.base import NoHooks
from tether.runtime.models.scripted import Script, ScriptedChatModel
from tether.runtime.run.runner import RunOptions, start_run
from tether.sandbox.recording import RecordingSandbox


def _script(command: str) -> dict[str, Any]:
    return {
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
                            {"name": "run_shell", "args": {"command": command}},
                            {"name": "finish_step", "args": {"summary": "ok"}},
                        ]
                    }
                ]
            },
            "summarizer": [{"tool_calls": [{"name": "submit_summary", "args": {"text": "done"}}]}],
        },
    }


def test_an_unexpected_error_mid_run_closes_the_sandbox_and_marks_the_run_interrupted(tmp_path: Path) -> None:
    box = RecordingSandbox(fail_on="echo hi")
    config = load_config(tmp_path / "home")
    (tmp_path / "ws").mkdir()
    options = RunOptions(goal="g", workspace=tmp_path / "ws", model_spec="scripted:test")
    record = start_run(
        config,
        options,
        model=ScriptedChatModel(script=Script.model_validate(_script("echo hi"))),
        sandbox_factory=lambda *_: box,
    )
    assert box.closed
    assert record.status == "interrupted" and "engine went away" in record.reason
    meta = json.loads((config.runs_dir / record.run_id / "run.json").read_text())
    assert meta["status"] == "interrupted"


class BrokenLedger(NoHooks):
    def decide_ask(self, verdict: Any, run_id: str) -> Any:
        msg = "ledger unreadable"
        raise OSError(msg)


def test_a_failing_trust_decision_leaves_the_ask_to_a_person(tmp_path: Path) -> None:
    box = RecordingSandbox()
    config = load_config(tmp_path / "home")
    (tmp_path / "ws").mkdir()
    options = RunOptions(goal="g", workspace=tmp_path / "ws", model_spec="scripted:test")
    model = ScriptedChatModel(script=Script.model_validate(_script("pip install requests")))
    record = start_run(config, options, model=model, sandbox_factory=lambda *_: box, hooks=BrokenLedger())
    assert box.closed
    assert "pip install requests" not in box.commands  # nobody approved it: refused, never run
    events = read_events(config.runs_dir / record.run_id / "journal.jsonl")
    assert [(e.decision, e.enforced) for e in events if isinstance(e, VerdictRecorded)] == [("ask", "ask")]
    assert [(e.approved, e.by) for e in events if isinstance(e, ApprovalRecorded)] == [(False, "no-person")]
    assert not [e for e in events if isinstance(e, ExecFinished) and "pip" in e.cmd_id]
    assert record.status != "interrupted"


class BrokenMemory(NoHooks):
    def after_run(self, record: Any, model: Any) -> Any:
        msg = "memory model unreachable"
        raise RuntimeError(msg)


def test_a_failing_memory_cycle_after_the_run_is_reported_and_keeps_the_status(tmp_path: Path) -> None:
    box = RecordingSandbox()
    config = load_config(tmp_path / "home")
    (tmp_path / "ws").mkdir()
    options = RunOptions(goal="g", workspace=tmp_path / "ws", model_spec="scripted:test")
    model = ScriptedChatModel(script=Script.model_validate(_script("true")))
    record = start_run(config, options, model=model, sandbox_factory=lambda *_: box, hooks=BrokenMemory())
    assert box.closed
    assert "memory model unreachable" in record.memory["memory_error"]
    meta = json.loads((config.runs_dir / record.run_id / "run.json").read_text())
    assert record.status == meta["status"] != "interrupted"
