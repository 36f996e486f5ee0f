"""Runs that survive faults (issue 12): exactly-once after-run effects, signals, a lost checkpoint.

Real Docker sandbox (tiny image), real memory, real checkpoints. Where a
signal must land at one exact point, a hook or sandbox factory raises what
the signal handler raises there (KeyboardInterrupt, SystemExit).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tether.common.events import ExecFinished, ExecStarted, RunEnded, RunStarted, read_events
from tether.runtime.config import load_config
from tether.runtime.hooks.base import MemoryContext, NoHooks, RunInfo
from tether.runtime.hooks.chain import ChainedHooks, build_hooks
from tether.runtime.run.parts import docker_sandbox
from tether.runtime.run.runner import RunOptions, resume_run, start_run

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "verified-success.yaml"
SLEEPER = Path(__file__).parent / "scenarios" / "append-then-sleep.yaml"
pytestmark = pytest.mark.docker


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".index" not in p.parts and p.name != ".lock"}


def _containers(run_id: str) -> list[str]:
    import docker

    return [c.id for c in docker.from_env().containers.list(all=True, filters={"label": f"tether.run={run_id}"})]


def _ends(events: list[Any]) -> list[str]:
    return [e.key for e in events if isinstance(e, RunEnded)]


def test_resuming_a_finished_run_reports_it_and_changes_nothing(tether):
    code, first, err = tether.run(EXAMPLE)
    assert code == 0, err
    run_id = first["run_id"]
    before_memory, before_run = _files(tether.home / "memory"), _files(tether.home / "runs" / run_id)
    code, again, err = tether.cli("resume", run_id)
    assert code == 0, err
    assert again["status"] == "success" and again["lessons_written"] == first["lessons_written"]
    assert _files(tether.home / "memory") == before_memory
    assert _files(tether.home / "runs" / run_id) == before_run  # no second run_end, no second memory cycle
    assert len(_ends(tether.journal(run_id))) == 1


class StopAfterMemory(NoHooks):
    """The process dies once memory's effects are applied, before the run records that it did."""

    def after_run(self, record: Any, model: Any) -> Any:
        raise SystemExit(128 + signal.SIGTERM)


def test_a_run_stopped_in_its_memory_phase_revises_each_lesson_once_on_resume(tether):
    code, first, err = tether.run(EXAMPLE)
    assert code == 0, err
    lesson = tether.home / "memory" / "lessons" / f"{first['lessons_written'][0]}.md"
    tether.workspace = tether.workspace.parent / "ws2"
    tether.workspace.mkdir()
    config = load_config(tether.home, environ=tether.env)
    options = RunOptions(goal=first_goal(), workspace=tether.workspace, model_spec=f"scripted:{EXAMPLE}")
    record = start_run(config, options, hooks=ChainedHooks(build_hooks(config), StopAfterMemory()))
    assert record.status == "success" and "resume" in record.memory["memory_error"]
    assert lesson.read_text().count(f"run `{record.run_id}`") == 1  # revised once already

    again = resume_run(config, record.run_id, hooks=build_hooks(config))
    assert again.status == "success"
    text = lesson.read_text()
    assert text.count(f"run `{record.run_id}`") == 1, text  # not a second revision from the same run
    assert "revision_count: 1" in text
    events = read_events(config.runs_dir / record.run_id / "journal.jsonl")
    assert len(_ends(events)) == 1
    snapshot = _files(tether.home / "memory")
    resume_run(config, record.run_id, hooks=build_hooks(config))
    assert _files(tether.home / "memory") == snapshot


def _signal_during_sleep(tether, sig: signal.Signals, **popen: Any) -> tuple[subprocess.Popen, str]:
    """Start `tether run` of the append-then-sleep scenario; send `sig` once it sleeps (after the append ran)."""
    cmd = [sys.executable, "-m", "tether", "run", "--model", f"scripted:{SLEEPER}",
           "--workspace", str(tether.workspace), "--home", str(tether.home), "--json"]
    popen = popen or {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    proc = subprocess.Popen(cmd, env={**os.environ, **tether.env}, **popen)
    runs = tether.home / "runs"
    deadline = time.monotonic() + 90
    while not (
        runs.is_dir()
        and any(runs.iterdir())
        and any(
            isinstance(e, ExecStarted) and e.cmd_id == "append/0/1"
            for e in read_events(next(runs.iterdir()) / "journal.jsonl")
        )
    ):
        assert time.monotonic() < deadline and proc.poll() is None, "the run never reached its sleep"
        time.sleep(0.1)
    proc.send_signal(sig)
    return proc, next(runs.iterdir()).name


def first_goal() -> str:
    import yaml

    return yaml.safe_load(EXAMPLE.read_text())["goal"]


def test_sigterm_mid_command_ends_interrupted_hands_back_and_resumes(tether):
    proc, run_id = _signal_during_sleep(
        tether, signal.SIGTERM, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, err
    assert "Traceback" not in err
    meta = json.loads((tether.home / "runs" / run_id / "run.json").read_text())
    assert meta["status"] == "interrupted" and "SIGTERM" in meta["reason"]
    assert json.loads(out)["status"] == "interrupted"
    assert _containers(run_id) == []
    code, done, err = tether.cli("resume", run_id)
    assert code == 0, err
    assert done["status"] == "success"
    assert (tether.workspace / "log.txt").read_text() == "once\n"


def _config(tether):
    return load_config(tether.home, environ=tether.env)


def test_sigint_during_sandbox_start_is_interrupted_with_a_reason_and_resumes(tether):
    config = _config(tether)

    def interrupted_start(*args: Any) -> Any:
        raise KeyboardInterrupt

    options = RunOptions(
        goal="Append once to log.txt and check it.", workspace=tether.workspace, model_spec=f"scripted:{SLEEPER}"
    )
    record = start_run(config, options, sandbox_factory=interrupted_start)
    assert record.status == "interrupted" and "sandbox did not start" in record.reason and "Ctrl-C" in record.reason
    meta = json.loads((config.runs_dir / record.run_id / "run.json").read_text())
    assert meta["status"] == "interrupted" and meta["reason"]
    done = resume_run(config, record.run_id, sandbox_factory=docker_sandbox)
    assert done.status == "success", done.reason


class InterruptedRecall(NoHooks):
    def before_run(self, run: RunInfo) -> MemoryContext:
        raise KeyboardInterrupt


def test_sigint_during_recall_leaves_a_run_that_resumes(tether):
    config = _config(tether)
    options = RunOptions(
        goal="Append once to log.txt and check it.", workspace=tether.workspace, model_spec=f"scripted:{SLEEPER}"
    )
    record = start_run(config, options, hooks=ChainedHooks(build_hooks(config), InterruptedRecall()))
    assert record.status == "interrupted" and "preparing" in record.reason
    assert json.loads((config.runs_dir / record.run_id / "run.json").read_text())["phase"] == "preparing"
    done = resume_run(config, record.run_id, hooks=build_hooks(config))
    assert done.status == "success", done.reason
    assert [type(e).__name__ for e in read_events(config.runs_dir / record.run_id / "journal.jsonl")].count(
        "RunEnded"
    ) == 1


def test_a_corrupt_checkpoint_database_is_moved_aside_and_new_runs_go_on(tether, caplog):
    tether.home.mkdir(parents=True)
    (tether.home / "checkpoints.sqlite").write_bytes(b"this is not a database\x00" * 500)
    with caplog.at_level("WARNING"):
        code, out, err = tether.run(EXAMPLE)
    assert code == 0, err
    aside = [p.name for p in tether.home.iterdir() if p.name.startswith("checkpoints.sqlite.corrupt-")]
    assert len(aside) == 1 and aside[0] in caplog.text


def test_a_run_whose_checkpoint_is_gone_offers_a_restart_from_its_journal(tether):
    proc, run_id = _signal_during_sleep(tether, signal.SIGKILL)
    proc.wait(timeout=30)
    for p in tether.home.glob("checkpoints.sqlite*"):
        p.unlink()
    code, out, err = tether.cli("resume", run_id)
    assert code == 2 and "--from-journal" in err and "Traceback" not in err
    code, done, err = tether.cli("resume", run_id, "--from-journal")
    assert code == 0, err
    assert done["status"] == "success"
    assert (tether.workspace / "log.txt").read_text() == "once\n"  # the journaled append was reused, not re-run
    events = tether.journal(run_id)
    assert [e.cmd_id for e in events if isinstance(e, ExecFinished)].count("append/0/0") == 1
    assert sum(isinstance(e, RunStarted) for e in events) == 2


def test_after_sigkill_and_resume_a_lent_workspace_has_its_owners_back(tether):
    if os.geteuid() != 0:
        pytest.skip("lending a root-owned workspace needs root (CI runs as root)")
    notes = tether.workspace / "notes.txt"
    notes.write_text("mine\n")
    os.chown(notes, 4242, 4242)  # a file of another account inside root's workspace
    proc, run_id = _signal_during_sleep(tether, signal.SIGKILL)
    proc.wait(timeout=30)
    assert tether.workspace.stat().st_uid == 1000  # still lent: the killed process could not give it back
    code, done, err = tether.cli("resume", run_id)
    assert code == 0, err
    assert done["status"] == "success"
    owners = {p.name: (p.stat().st_uid, p.stat().st_gid) for p in [tether.workspace, *tether.workspace.iterdir()]}
    assert owners == {"ws": (0, 0), "notes.txt": (4242, 4242), "log.txt": (0, 0)}
    assert not any((tether.home / "lent").iterdir())


def test_a_binary_memory_md_leaves_runs_working_and_memory_commands_one_line(tether):
    (tether.home / "memory").mkdir(parents=True)
    manifest = tether.home / "memory" / "MEMORY.md"
    manifest.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe\xfd")
    code, out, err = tether.run(EXAMPLE)
    assert code == 0, err
    assert out["status"] == "success" and str(manifest) in out["memory_error"]
    assert "Traceback" not in err
    code, out, err = tether.cli("memory", "list")
    assert code == 2 and str(manifest) in err and "Traceback" not in err
