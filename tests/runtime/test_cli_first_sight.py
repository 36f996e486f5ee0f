"""What a person notices first (issue 24, item 8): --version, completion, run ids anywhere, the whole wait.

The durations test starts the real `tether` console script, so the process
start it measures from is a real one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tether import __version__
from tether.runtime.cli.app import app

TETHER = Path(sys.executable).parent / "tether"
SCENARIO = Path(__file__).resolve().parents[1] / "graphs" / "scenarios" / "pip-ask.yaml"


def test_version_and_completion():
    for flag in ("--version", "-V"):
        done = subprocess.run([str(TETHER), flag], capture_output=True, text=True, timeout=60, check=True)
        assert done.stdout.strip() == f"tether {__version__}"
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and __version__ in result.stdout
    script = CliRunner().invoke(app, ["--show-completion", "bash"], env={"SHELL": "/bin/bash"})
    assert script.exit_code == 0 and "_TETHER_COMPLETE" in script.stdout


def test_run_ids_complete_in_the_shell(tmp_path):
    for name in ("20261201-000000-aaaaaa", "20261202-000000-bbbbbb"):
        (tmp_path / "runs" / name).mkdir(parents=True)
    env = {**os.environ, "TETHER_HOME": str(tmp_path), "_TETHER_COMPLETE": "complete_bash",
           "COMP_WORDS": "tether show 2026120", "COMP_CWORD": "2"}
    done = subprocess.run([str(TETHER)], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["20261202-000000-bbbbbb", "20261201-000000-aaaaaa"]


@pytest.mark.docker
def test_runs_shows_the_whole_wait_from_the_process_start(tmp_path, tiny_image):
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    env = {**os.environ, "TETHER_SANDBOX__IMAGE": tiny_image, "TETHER_HOME": str(home)}
    began = time.time()
    done = subprocess.run([str(TETHER), "run", "--model", f"scripted:{SCENARIO}", "--workspace", str(ws), "--yes",
                           "--no-memory", "--json"], env=env, capture_output=True, text=True, timeout=300)
    waited = time.time() - began
    out = json.loads(done.stdout)
    meta = json.loads((home / "runs" / out["run_id"] / "run.json").read_text())
    first_event = json.loads((home / "runs" / out["run_id"] / "journal.jsonl").read_text().splitlines()[0])["ts"]
    assert meta["started_at"] < first_event, "the wait starts before the run's first event (process start)"
    assert meta["started_at"] >= began - 1
    listed = json.loads(subprocess.run([str(TETHER), "runs", "--json"], env=env, capture_output=True, text=True,
                                       timeout=60, check=True).stdout)["runs"][0]
    assert listed["duration_s"] == pytest.approx(meta["totals"]["wait_s"])
    events = (home / "runs" / out["run_id"] / "journal.jsonl").read_text().splitlines()
    last_event = json.loads(events[-1])["ts"]
    # The wait runs from the process start to the end: it covers every event, and fits inside the caller's clock
    # (no slack on a busy machine: compare with the run's own timestamps, not with wall time).
    assert last_event - meta["started_at"] - 0.01 <= listed["duration_s"] <= waited, (listed["duration_s"], waited)
    narrow = subprocess.run([str(TETHER), "runs"], env={**env, "COLUMNS": "80"}, capture_output=True, text=True,
                            timeout=60, check=True).stdout
    assert out["run_id"] in narrow and all(len(line) <= 80 for line in narrow.splitlines()), narrow
    shown = json.loads(subprocess.run([str(TETHER), "show", "last", "--json"], env=env, capture_output=True,
                                      text=True, timeout=60, check=True).stdout)
    assert shown["run_id"] == out["run_id"] and shown["duration_s"] == listed["duration_s"]
    forgot = subprocess.run([str(TETHER), "memory", "show", out["run_id"][:15]], env=env, capture_output=True,
                            text=True, timeout=60)
    assert "Traceback" not in forgot.stderr
