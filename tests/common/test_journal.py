"""Journal durability (what is fdatasynced when), and re-runs that keep to the journal."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest
from langgraph.runtime import Runtime

import tether.common.journal as journal_mod
from tether.common.events import (
    CommandProposed,
    ExecFinished,
    ExecStarted,
    StepChanged,
    read_events,
)
from tether.common.journal import Journal
from tether.graphs.context import RunContext
from tether.graphs.execution import execute, guard
from tether.guardian.verdict import RuleHit, Verdict
from tether.runtime.run.checkpoints import JournalFirstSaver
from tether.sandbox.recording import RecordingSandbox


@pytest.fixture
def syncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = os.fdatasync

    def counted(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(journal_mod.os, "fdatasync", counted)
    return calls


def test_results_are_synced_at_once_other_events_by_the_next_sync(tmp_path: Path, syncs: list[int]) -> None:
    j = Journal(tmp_path / "journal.jsonl")
    assert j.append(StepChanged(key="step:a:running:0", step="a", status="running"))
    assert j.append(
        CommandProposed(key="cmd:a/0/0", cmd_id="a/0/0", step="a", tool="run_shell", command="true", cwd="/w")
    )
    assert syncs == []
    assert [e.key for e in read_events(j.path)] == ["step:a:running:0", "cmd:a/0/0"]  # flushed: readers see them
    assert j.append(ExecStarted(key="exec_start:a/0/0", cmd_id="a/0/0"))
    assert len(syncs) == 1  # one fdatasync covers every line before it
    assert j.append(ExecFinished(key="exec:a/0/0", cmd_id="a/0/0", exit_code=0, output="", duration_s=0.0))
    assert len(syncs) == 2
    j.sync()
    assert len(syncs) == 2  # nothing pending
    assert j.append(StepChanged(key="step:a:done:0", step="a", status="done"))
    assert not j.append(StepChanged(key="step:a:done:0", step="a", status="done"))
    j.close()
    assert len(syncs) == 3
    again = Journal(j.path)
    assert [e.kind for e in again.events] == ["step", "command", "exec_start", "exec", "step"]
    assert isinstance(again.get("exec:a/0/0"), ExecFinished) and again.result("a/0/0") is not None


def test_the_checkpointer_syncs_the_journal_before_it_saves(tmp_path: Path, syncs: list[int]) -> None:
    j = Journal(tmp_path / "journal.jsonl")
    saver = JournalFirstSaver(sqlite3.connect(":memory:", check_same_thread=False), j)
    j.append(StepChanged(key="step:a:running:0", step="a", status="running"))
    assert syncs == []
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c"}}
    saver.put_writes(config, [("current", "a")], "task")
    assert len(syncs) == 1
    saver.put_writes(config, [("current", "b")], "task2")
    assert len(syncs) == 1  # nothing new to sync


def _runtime(path: Path, box: RecordingSandbox, decision: str) -> Runtime[RunContext]:
    def judge(command: str, context: object) -> Verdict:  # noqa: ARG001
        hits = [] if decision == "allow" else [RuleHit(id="X1", category="test", decision=decision, reason="no")]
        return Verdict(decision=decision, hits=hits, reason=decision)

    return Runtime(context=RunContext(run_id="r", model=None, sandbox=box, journal=Journal(path),  # type: ignore[arg-type]
                                      guard=judge))


def _turn(state: dict, runtime: Runtime[RunContext]) -> dict:
    """guard, then execute, as the graph's edges run them when nothing is asked."""
    judged = guard(state, runtime)  # type: ignore[arg-type]
    return execute({**state, **judged}, runtime)  # type: ignore[arg-type]


def test_a_rerun_guard_keeps_the_journaled_verdict_and_result(tmp_path: Path) -> None:
    """Crash after the command ran, before the checkpoint; on resume the guardian says deny."""
    state = {
        "run_id": "r",
        "goal": "g",
        "started_at": time.time(),
        "tokens": 0,
        "current": "a",
        "messages": [],
        "plan": [{"id": "a", "description": "", "depends_on": [], "verify": ""}],
        "steps": {"a": {"id": "a", "status": "running", "reason": "", "turns": 0, "commands": []}},
        "pending": [
            {
                "call_id": "c1",
                "cmd_id": "a/0/0",
                "name": "run_shell",
                "args": {"command": "echo hi"},
                "approval": "none",
            }
        ],
    }
    path = tmp_path / "journal.jsonl"
    box = RecordingSandbox(output="ran")
    first = _turn(state, _runtime(path, box, "allow"))
    assert box.commands == ["echo hi"]
    rerun = _turn(state, _runtime(path, box, "deny"))
    assert box.commands == ["echo hi"]  # not run again
    assert rerun["messages"][-1].content == first["messages"][-1].content == "exit code 0\nran"
    verdicts = [e for e in read_events(path) if e.kind == "verdict"]
    assert [(v.decision, v.enforced) for v in verdicts] == [("allow", "allow")]


def test_a_torn_last_line_is_skipped_and_the_next_event_starts_a_line_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    done = ExecFinished(key="exec:a/0/0", cmd_id="a/0/0", exit_code=0, output="✓ passed", duration_s=0.1)
    torn = (
        ExecFinished(key="exec:a/0/1", cmd_id="a/0/1", exit_code=0, output="✓ passed", duration_s=0.1)
        .model_dump_json()
        .encode()
    )
    # killed mid-write, inside the multi-byte check mark
    path.write_bytes(done.model_dump_json().encode() + b"\n" + torn[: torn.index("✓".encode()) + 1])
    assert [e.key for e in read_events(path)] == ["exec:a/0/0"]
    journal = Journal(path)
    assert journal.result("a/0/0") is not None and journal.result("a/0/1") is None
    journal.append(ExecStarted(key="exec_start:a/0/1", cmd_id="a/0/1"))
    journal.close()
    assert [e.key for e in read_events(path)] == ["exec:a/0/0", "exec_start:a/0/1"]
