"""Shadow mode at the node level: every ask that runs is recorded for the audit, whoever approved it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tether.common.journal import Journal
from tether.graphs.execution import execution_nodes
from tether.graphs.state import Deps
from tether.guardian.verdict import RuleHit, Verdict
from tether.sandbox.recording import RecordingSandbox


def _deps(path: Path, box: RecordingSandbox, approval: str, records: list[Any]) -> Deps:
    def guard(command: str, context: object) -> Verdict:  # noqa: ARG001
        return Verdict(decision="ask", hits=[RuleHit(id="PKG-001", category="package-install", decision="ask", reason="pip")], reason="pip")

    return Deps(
        model=None, sandbox=box, journal=Journal(path), guard=guard, gate=lambda s: {},  # type: ignore[arg-type]
        approval=approval, shadow_record=lambda v, cmd, person: records.append((cmd, person)),  # type: ignore[arg-type]
    )


def test_a_shadow_ask_paused_for_a_person_then_resumed_with_yes_is_still_recorded(tmp_path: Path) -> None:
    state: dict[str, Any] = {
        "run_id": "r", "goal": "g", "started_at": time.time(), "tokens": 0, "current": "a", "messages": [], "shadow": True,
        "plan": [{"id": "a", "description": "", "depends_on": [], "verify": ""}],
        "steps": {"a": {"id": "a", "status": "running", "reason": "", "turns": 0, "commands": []}},
        "pending": [{"call_id": "c1", "cmd_id": "a/0/0", "name": "run_shell", "args": {"command": "pip install x"}, "approval": "none"}],
    }
    path, box, records = tmp_path / "journal.jsonl", RecordingSandbox(output="ran"), []
    judged = execution_nodes(_deps(path, box, "prompt", records))["guard"](state)  # --ask-later: waits for a person
    assert judged["pending"][0]["enforced"] == "ask" and records == []
    # `tether resume RUN --yes`: the ask is approved by the flag, and runs
    nodes = execution_nodes(_deps(path, box, "yes", records))
    approved = nodes["approve"]({**state, **judged})
    nodes["execute"]({**state, **approved})
    assert box.commands == ["pip install x"]
    assert records == [("pip install x", None)]  # recorded for the audit; no person was asked
