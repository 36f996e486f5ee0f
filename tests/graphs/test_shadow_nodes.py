"""Shadow mode at the node level: every ask that runs is recorded for the audit, whoever approved it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from tether.common.journal import Journal
from tether.graphs.context import NoApprovals, RunContext
from tether.graphs.execution import approve, execute, guard
from tether.guardian.verdict import RuleHit, Verdict
from tether.sandbox.recording import RecordingSandbox


class Recorder(NoApprovals):
    def __init__(self, records: list[Any]) -> None:
        self.records = records

    def shadow_record(self, verdict: Verdict, command: str, person: bool | None, run_id: str) -> None:  # noqa: ARG002
        self.records.append((command, person))


def _runtime(path: Path, box: RecordingSandbox, approval: str, records: list[Any]) -> Runtime[RunContext]:
    def ask(command: str, context: object) -> Verdict:  # noqa: ARG001
        hit = RuleHit(id="PKG-001", category="package-install", decision="ask", reason="pip")
        return Verdict(decision="ask", hits=[hit], reason="pip")

    ctx = RunContext(run_id="r", model=None, sandbox=box, journal=Journal(path), guard=ask,  # type: ignore[arg-type]
                     approval=approval, approvals=Recorder(records))  # type: ignore[arg-type]
    return Runtime(context=ctx)


def test_a_shadow_ask_paused_for_a_person_then_resumed_with_yes_is_still_recorded(tmp_path: Path) -> None:
    state: dict[str, Any] = {
        "run_id": "r",
        "goal": "g",
        "started_at": time.time(),
        "tokens": 0,
        "current": "a",
        "messages": [],
        "shadow": True,
        "plan": [{"id": "a", "description": "", "depends_on": [], "verify": ""}],
        "steps": {"a": {"id": "a", "status": "running", "reason": "", "turns": 0, "commands": []}},
        "pending": [
            {
                "call_id": "c1",
                "cmd_id": "a/0/0",
                "name": "run_shell",
                "args": {"command": "pip install x"},
                "approval": "none",
            }
        ],
    }
    path, box, records = tmp_path / "journal.jsonl", RecordingSandbox(output="ran"), []
    judged = guard(state, _runtime(path, box, "prompt", records))  # --ask-later: waits for a person
    assert judged["pending"][0]["enforced"] == "ask" and records == []
    # `tether resume RUN --yes`: the ask is approved by the flag, and runs
    yes = _runtime(path, box, "yes", records)
    approved = approve({**state, **judged}, yes)
    execute({**state, **approved}, yes)
    assert box.commands == ["pip install x"]
    assert records == [("pip install x", None)]  # recorded for the audit; no person was asked
