"""One live run per workspace; snapshot gc spares it; the hand-back always completes (issue 24, items 3 and 4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tether.common.limits import WorkspaceLimits
from tether.common.snapshot import SNAPSHOT_DIR
from tether.runtime.workspace.handback import lending_record
from tether.sandbox.lending import LendingRecord
from tether.sandbox.workspace import Handover

SCENARIOS = Path(__file__).parent / "scenarios"
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="lending a workspace needs root")


def _wait_for(path: Path, text: str, seconds: float = 60) -> None:
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        if path.is_file() and text in path.read_text(errors="replace"):
            return
        time.sleep(0.1)
    msg = f"{text!r} never appeared in {path}"
    raise AssertionError(msg)


@pytest.mark.docker
def test_a_second_run_refuses_with_the_first_runs_id_and_the_first_finishes(tether):
    env = {**os.environ, **tether.env}
    first = subprocess.Popen(
        [sys.executable, "-m", "tether.runtime.cli.app", "run", "--model",
         f"scripted:{SCENARIOS / 'append-then-sleep.yaml'}", "--workspace", str(tether.workspace),
         "--home", str(tether.home), "--json", "--no-memory"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        runs = tether.home / "runs"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not list(runs.glob("*/journal.jsonl")):
            time.sleep(0.1)
        journal = next(runs.glob("*/journal.jsonl"))
        run_id = journal.parent.name
        _wait_for(journal, '"exec_start:append/0/1"')  # sleeping in the sandbox now

        code, out, err = tether.run(SCENARIOS / "append-then-sleep.yaml", "--no-memory")
        assert code == 2 and run_id in err and "in use" in err and out is None
        assert len(err.strip().splitlines()) == 1
        code, _, err = tether.cli("rollback", run_id)
        assert code == 2 and run_id in err
        code, gc, err = tether.cli("snapshot", "gc", "--keep", "0")
        assert code == 0 and run_id not in gc["pruned"]
        assert (runs / run_id / SNAPSHOT_DIR).is_dir()
        stdout, stderr = first.communicate(timeout=120)
    finally:
        first.kill()
        first.wait()
    result = json.loads(stdout.strip().splitlines()[-1])
    assert first.returncode == 0 and result["status"] == "success", stderr
    assert (tether.workspace / "log.txt").read_text() == "once\n"
    assert not (runs / run_id / "live.json").exists()
    code, out, err = tether.run(SCENARIOS / "append-then-sleep.yaml", "--no-memory")  # free again
    assert out is not None and out["run_id"] != run_id, err


@as_root
def test_a_hand_back_past_its_deadline_still_finishes_and_says_so(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(40):
        (ws / f"d{i}").mkdir()
        for j in range(50):
            (ws / f"d{i}" / f"f{j}").write_text("x")
    handover = Handover(ws, 1000, 1000, WorkspaceLimits())
    handover.give()
    assert os.stat(ws / "d3" / "f7").st_uid == 1000
    os.setegid(0)
    handover.limits = WorkspaceLimits(host_pass_seconds=1e-6)
    handover.take_back()
    assert handover.late_s is not None
    assert {os.lstat(p).st_uid for p in [ws, *ws.rglob("*")]} == {0}


@as_root
def test_the_next_command_of_any_kind_finishes_a_hand_back_a_dead_run_left(tether):
    from typer.testing import CliRunner

    from tether.runtime.cli.app import app

    ws = tether.workspace
    (ws / "sub").mkdir()
    (ws / "sub" / "f").write_text("the person's\n")
    handover = Handover(ws, 1000, 1000, WorkspaceLimits())
    handover.record = LendingRecord(lending_record(tether.home, ws))
    handover.give()  # ... and the process dies: nothing takes it back
    assert os.stat(ws / "sub" / "f").st_uid == 1000
    result = CliRunner().invoke(app, ["runs", "--home", str(tether.home)])
    assert result.exit_code == 0
    assert "hand-back:" in result.stderr and str(ws) in result.stderr and "handed back" in result.stderr
    assert {os.lstat(p).st_uid for p in [ws, *ws.rglob("*")]} == {0}
    assert not handover.record.path.exists()


@as_root
def test_a_live_runs_lending_is_never_taken_back_by_another_command(tmp_path):
    from tether.runtime.workspace.handback import settle_lendings
    from tether.runtime.workspace.lock import WorkspaceLock

    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    (ws / "f").write_text("x")
    lock = WorkspaceLock(home, ws, "r-live").acquire()  # this process is the live run
    handover = Handover(ws, 1000, 1000, WorkspaceLimits())
    handover.record = LendingRecord(lending_record(home, ws))
    handover.give()
    assert settle_lendings(home, WorkspaceLimits()) == []
    assert os.stat(ws / "f").st_uid == 1000, "a live run's workspace was taken back from under it"
    lock.release()
    notes = settle_lendings(home, WorkspaceLimits())
    assert len(notes) == 1 and "handed back" in notes[0]
    assert os.stat(ws / "f").st_uid == 0


@pytest.mark.docker
@as_root
def test_the_sandbox_tells_of_a_late_hand_back(make_sandbox, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f").write_text("x")
    box = make_sandbox(ws)
    assert box.exec("echo more >> f").exit_code == 0
    assert box._handover is not None
    box._handover.limits = WorkspaceLimits(host_pass_seconds=1e-6)  # the hand-back runs past its deadline
    box.close()
    assert os.stat(ws / "f").st_uid == 0
    assert len(box.notices) == 1 and "past workspace.host_pass_seconds" in box.notices[0]
    assert "finished anyway" in box.notices[0]
