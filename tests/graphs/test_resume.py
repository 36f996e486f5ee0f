"""A run SIGKILLed mid-command resumes without repeating what it had finished."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tether.common.events import ExecFinished, ExecStarted, read_events

SCENARIO = Path(__file__).parent / "scenarios" / "append-then-sleep.yaml"
pytestmark = pytest.mark.docker


def _wait_for(predicate, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting for the run"
        time.sleep(0.1)


def test_resume_after_sigkill_does_not_repeat_a_finished_command(tether):
    cmd = [sys.executable, "-m", "tether", "run", "--model", f"scripted:{SCENARIO}",
           "--workspace", str(tether.workspace), "--home", str(tether.home), "--json"]
    proc = subprocess.Popen(cmd, env={**os.environ, **tether.env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        runs = tether.home / "runs"
        _wait_for(lambda: runs.is_dir() and any(runs.iterdir()))
        run_id = next(runs.iterdir()).name
        journal = runs / run_id / "journal.jsonl"
        _wait_for(lambda: any(isinstance(e, ExecStarted) and e.cmd_id == "append/0/1" for e in read_events(journal)))
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert (tether.workspace / "log.txt").read_text() == "once\n"

    code, out, err = tether.cli("resume", run_id)
    assert code == 0, err
    assert out["status"] == "success"
    assert (tether.workspace / "log.txt").read_text() == "once\n"
    results = [e.cmd_id for e in tether.journal(run_id) if isinstance(e, ExecFinished)]
    assert results.count("append/0/0") == 1
    assert results.count("append/0/1") == 1  # the killed sleep is not run again: its result is unknown
    killed = next(e for e in tether.journal(run_id) if isinstance(e, ExecFinished) and e.cmd_id == "append/0/1")
    assert killed.unknown and killed.exit_code == 125 and "not run again" in killed.output


def test_a_command_killed_mid_way_is_not_run_again_on_resume(tether):
    """At most once across a kill: the append inside the killed command must not happen twice."""
    scenario = SCENARIO.parent / "append-in-a-killed-command.yaml"
    cmd = [sys.executable, "-m", "tether", "run", "--model", f"scripted:{scenario}",
           "--workspace", str(tether.workspace), "--home", str(tether.home), "--json"]
    proc = subprocess.Popen(cmd, env={**os.environ, **tether.env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        runs = tether.home / "runs"
        _wait_for(lambda: runs.is_dir() and any(runs.iterdir()))
        run_id = next(runs.iterdir()).name
        journal = runs / run_id / "journal.jsonl"
        _wait_for(lambda: any(isinstance(e, ExecStarted) and e.cmd_id == "append/0/0" for e in read_events(journal)))
        _wait_for(lambda: (tether.workspace / "log.txt").exists())
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert (tether.workspace / "log.txt").read_text() == "once\n"

    code, out, err = tether.cli("resume", run_id)
    assert (tether.workspace / "log.txt").read_text() == "once\n", "the killed append ran twice"
    killed = [e for e in tether.journal(run_id) if isinstance(e, ExecFinished) and e.cmd_id == "append/0/0"]
    assert len(killed) == 1 and killed[0].unknown and killed[0].exit_code == 125, killed
    assert out is not None and out["status"] != "interrupted", err


def _checkpoints(home: Path, run_id: str) -> tuple[int, int]:
    """(checkpoints, pending writes) the run's thread holds in the home's checkpoint database."""
    conn = sqlite3.connect(home / "checkpoints.sqlite")
    try:
        rows = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = ?", (run_id,)).fetchone()[0]
        writes = conn.execute("SELECT count(*) FROM writes WHERE thread_id = ?", (run_id,)).fetchone()[0]
        return rows, writes
    finally:
        conn.close()


PAUSING = SCENARIO.parent / "pip-ask.yaml"


def test_a_finished_run_keeps_its_last_checkpoint_and_still_shows_reports_and_resumes(tether):
    """run.keep_checkpoints = "last": show, report and resume of a finished run need only its last checkpoint."""
    other = tether.workspace.parent / "ws2"
    other.mkdir()
    code, out, err = type(tether)(home=tether.home, workspace=other, env=tether.env).run(
        PAUSING, "--ask-later", "--no-memory")
    assert code == 3, err
    paused = out["run_id"]
    code, out, err = tether.run(SCENARIO.parent / "append-then-sleep.yaml", "--no-memory")
    assert code == 0, err
    run_id = out["run_id"]
    assert _checkpoints(tether.home, run_id) == (1, 0)
    kept_paused = _checkpoints(tether.home, paused)
    assert kept_paused[0] > 1  # a paused run keeps every checkpoint
    for args in (("show", run_id), ("report", run_id), ("resume", run_id)):
        code, shown, err = tether.cli(*args)
        assert code == 0, (args, err)
    assert shown["status"] == "success" and shown["steps"]
    code, report, err = tether.cli("gc", "--dry-run")
    assert code == 0, err
    assert report["runs_pruned"] == [] and report["skipped"][paused]
    code, report, err = tether.cli("gc")
    assert code == 0, err
    assert paused not in report["runs_pruned"] and _checkpoints(tether.home, paused) == kept_paused
    code, out, err = tether.cli("approve", paused)  # the paused run still resumes from its checkpoints
    assert code == 0, err
    assert out["status"] == "success"
    assert _checkpoints(tether.home, paused) == (1, 0)


def test_tether_gc_prunes_a_home_that_kept_every_checkpoint(tether):
    env = {**tether.env, "TETHER_RUN__KEEP_CHECKPOINTS": '"all"'}
    kept = type(tether)(home=tether.home, workspace=tether.workspace, env=env)
    code, out, err = kept.run(SCENARIO.parent / "append-then-sleep.yaml", "--no-memory")
    assert code == 0, err
    run_id = out["run_id"]
    before = _checkpoints(tether.home, run_id)
    assert before[0] > 1
    code, report, err = tether.cli("gc", "--dry-run")
    assert code == 0, err
    assert report["runs_pruned"] == [run_id] and report["checkpoint_bytes"] > 0
    assert _checkpoints(tether.home, run_id) == before
    code, report, err = tether.cli("gc")
    assert code == 0, err
    assert report["runs_pruned"] == [run_id] and report["db_after"] < report["db_before"]
    assert _checkpoints(tether.home, run_id) == (1, 0)
    code, shown, err = tether.cli("resume", run_id)
    assert code == 0 and shown["status"] == "success", err
