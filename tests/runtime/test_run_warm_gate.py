"""The gate's two fresh sandboxes start warm while the run works and are gone after it, on every exit path.

Real Docker engine (tiny image), real runner and checkpoints, scripted model.
A recording factory wraps the real one to see when each sandbox was asked
for and on which folder; the containers are looked up in the engine.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from tether.common.events import ExecStarted, GateRecorded, SummaryWritten, read_events
from tether.common.snapshot import snapshot
from tether.gate.warm import WARM_AFTER_DIR, WARM_BEFORE_DIR, WarmSides
from tether.gate.warm_side import HandedSide
from tether.runtime.config import TetherConfig, load_config
from tether.runtime.models.scripted import Script, ScriptedChatModel
from tether.runtime.run.parts import docker_sandbox
from tether.runtime.run.runner import RunOptions, resume_run, start_run
from tether.runtime.workspace.handback import lending_record
from tether.sandbox.docker import DockerSandbox

pytestmark = pytest.mark.docker

GOOD = "printf '#!/bin/bash\\necho \"hello, ${1:-world}\"\\n' > greet.sh"
BAD = "printf 'echo nope\\n' > greet.sh"
TEST_SH = 'out=$(bash greet.sh tether)\n[ "$out" = "hello, tether" ] || { echo "FAIL: $out"; exit 1; }\n'


def _script(*commands: str, first: int = 0) -> Script:
    """The actor runs `commands` and finishes; the first `first` of them in a model turn of their own."""
    calls: list[dict[str, Any]] = [{"name": "run_shell", "args": {"command": c}} for c in commands]
    calls.append({"name": "finish_step", "args": {"summary": "fixed", "files_read": ["greet.sh", "test.sh"],
                                                  "files_changed": ["greet.sh"]}})
    turns = [{"tool_calls": calls[:first]}, {"tool_calls": calls[first:]}] if first else [{"tool_calls": calls}]
    return Script.model_validate({
        "goal": "g",
        "responses": {
            "planner": [{"tool_calls": [{"name": "submit_plan", "args": {"steps": [
                {"id": "fix", "description": "fix greet.sh", "verify": "bash test.sh"}]}}]}],
            "actor": {"fix": turns},
            "summarizer": [{"tool_calls": [{"name": "submit_summary", "args": {
                "text": "greet.sh fixed", "files": ["greet.sh"], "commands": ["bash test.sh"],
                "claims": [{"text": "test passes", "command": "bash test.sh"}]}}]}],
        },
    })


def _containers(run_id: str) -> list[str]:
    import docker

    return [c.name for c in docker.from_env().containers.list(all=True, filters={"label": f"tether.run={run_id}"})]


class Recorder:
    """The real factory, noting (time asked, run id label, folder) of every sandbox."""

    def __init__(self, interrupt_on: str | None = None) -> None:
        self.asked: list[tuple[float, str, Path]] = []
        self.interrupt_on = interrupt_on

    def __call__(self, workspace: Path, config: TetherConfig, run_id: str, memory_dir: Path | None) -> Any:
        self.asked.append((time.time(), run_id, workspace))
        if self.interrupt_on is None or run_id.endswith("-before"):
            return docker_sandbox(workspace, config, run_id, memory_dir)
        return CtrlC(self.interrupt_on, workspace, config.sandbox, run_id=run_id, limits=config.workspace,
                     lending_record=lending_record(config.home, workspace)).start()

    def scratch(self) -> list[tuple[float, str, Path]]:
        return [a for a in self.asked if a[1].endswith("-before")]


class CtrlC(DockerSandbox):
    """A real sandbox whose command `interrupt_on` is where the person presses Ctrl-C."""

    def __init__(self, interrupt_on: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.interrupt_on = interrupt_on

    def exec(self, command: str, **kwargs: Any) -> Any:
        if command == self.interrupt_on:
            time.sleep(1.5)  # the gate's sandboxes are still starting or just up
            raise KeyboardInterrupt
        return super().exec(command, **kwargs)


@pytest.fixture
def setup(tiny_image: str, tmp_path: Path) -> tuple[TetherConfig, Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "greet.sh").write_text("echo hi\n")
    (ws / "test.sh").write_text(TEST_SH)
    env = {"TETHER_SANDBOX__IMAGE": tiny_image, "TETHER_SANDBOX__DEFAULT_TIMEOUT_S": "30"}
    return load_config(tmp_path / "home", environ=env), ws


def _run(config: TetherConfig, ws: Path, factory: Recorder, *commands: str, first: int = 0, **options: Any) -> Any:
    opts = RunOptions(goal="g", workspace=ws, model_spec="scripted:test", verify=["bash test.sh"], memory=False,
                      **options)
    model = ScriptedChatModel(script=_script(*commands, first=first))
    return start_run(config, opts, model=model, sandbox_factory=factory)


def _nothing_left(config: TetherConfig, run_id: str) -> None:
    assert _containers(run_id) == [] and _containers(f"{run_id}-before") == []
    run_dir = config.runs_dir / run_id
    assert not [p.name for p in run_dir.iterdir() if p.name.startswith("gate-")]


@pytest.mark.parametrize(("fix", "status"), [(GOOD, "success"), (BAD, "failed")])
def test_the_gate_takes_the_sandboxes_started_while_the_run_worked(setup, fix, status) -> None:
    config, ws = setup
    factory = Recorder()
    record = _run(config, ws, factory, "cat greet.sh test.sh", fix, "bash test.sh")
    assert record.status == status, record.reason
    events = read_events(config.runs_dir / record.run_id / "journal.jsonl")
    gate_began = next(e.ts for e in events if isinstance(e, SummaryWritten))
    first_command = next(e.ts for e in events if isinstance(e, ExecStarted))
    scratch = factory.scratch()
    # exactly the two warm sides, asked for before the gate began, on their own folders: no cold start at the gate
    assert sorted(p.name for _, _, p in scratch) == [WARM_AFTER_DIR, WARM_BEFORE_DIR]
    assert all(asked < gate_began for asked, _, _ in scratch)
    # asked for beside the run's own sandbox, not at its first command: up however soon the model finishes
    run_box = next(asked for asked, run_id, _ in factory.asked if run_id == record.run_id)
    assert all(asked < first_command and abs(asked - run_box) < 5 for asked, _, _ in scratch)
    gate = next(e for e in events if isinstance(e, GateRecorded))
    check = next(c for c in gate.checks if c["command"] == "bash test.sh")
    assert check["after_exit"] == (0 if status == "success" else 1)
    # the pre-run copy (from the snapshot) ran in the warm before side (its result is kept where the check passes)
    assert check["before_exit"] == (1 if status == "success" else None)
    _nothing_left(config, record.run_id)


def test_ctrl_c_while_the_gate_sandboxes_start_leaves_nothing_running(setup) -> None:
    config, ws = setup
    factory = Recorder(interrupt_on="bash test.sh")
    record = _run(config, ws, factory, "cat greet.sh test.sh", GOOD, "bash test.sh")
    assert record.status == "interrupted"
    assert len(factory.scratch()) == 2  # they had been started
    _nothing_left(config, record.run_id)


def test_a_pause_and_a_denial_leave_nothing_running(setup) -> None:
    config, ws = setup
    factory = Recorder()
    record = _run(config, ws, factory, "cat greet.sh test.sh", "pip install requests", GOOD, first=1,
                  approval="prompt")
    assert record.awaiting is not None  # paused on the ask, nobody to answer
    assert len(factory.scratch()) == 2
    _nothing_left(config, record.run_id)
    model = ScriptedChatModel(script=_script("cat greet.sh test.sh", "pip install requests", GOOD, first=1))
    done = resume_run(config, record.run_id, approved=False, model=model, sandbox_factory=factory)
    assert done.awaiting is None
    _nothing_left(config, record.run_id)


def _warm(tmp_path: Path, config: TetherConfig) -> tuple[WarmSides, Path, Path]:
    ws, run_dir = tmp_path / "ws", tmp_path / "home" / "runs" / "r1"
    snapshot(ws, run_dir)
    warm = WarmSides(run_dir, ws, lambda folder: docker_sandbox(folder, config, "r1-before", None))
    warm.start()
    return warm, ws, run_dir


def test_a_pre_run_copy_touched_before_the_hand_over_is_built_again(setup, tmp_path) -> None:
    config, _ = setup
    warm, ws, run_dir = _warm(tmp_path, config)
    try:
        warm.wait_started()
        planted = run_dir / WARM_BEFORE_DIR / "greet.sh"
        planted.write_text("echo planted\n")
        take, folder = warm.before_side(lambda: pytest.fail("a warm side was started"), run_dir / "cold")
        box = take()
        try:
            assert folder == run_dir / WARM_BEFORE_DIR and warm.used == []
            assert box.exec("cat greet.sh").output == "echo hi\n"  # from the snapshot again
        finally:
            box.close()
    finally:
        warm.close()
    assert _containers("r1-before") == []
    assert not (run_dir / WARM_BEFORE_DIR).exists()


def test_the_after_side_gets_the_final_workspace_and_its_user_can_write_it(setup, tmp_path) -> None:
    config, _ = setup
    warm, ws, run_dir = _warm(tmp_path, config)
    (ws / "new.txt").write_text("written by the run\n")
    (ws / "sub").mkdir()
    (ws / "sub" / "x").write_text("x\n")
    (ws / "greet.sh").write_text("echo changed\n")
    (ws / "test.sh").unlink()
    try:
        take, folder = warm.after_side(ws, lambda: pytest.fail("a cold side was started"), run_dir / "cold")
        box = take()
        try:
            assert warm.used == ["after"]
            out = box.exec("cat new.txt sub/x && echo more >> sub/x && touch made && ls")
            assert out.exit_code == 0, out.output
            assert "written by the run" in out.output and "made" in out.output
            assert (folder / "sub" / "x").read_text() == "x\nmore\n"
            # the pre-run copy it started on is now the final workspace: changed, deleted, kept and writable
            out = box.exec("cat greet.sh && test ! -e test.sh && echo kept >> greet.sh && cat greet.sh")
            assert out.exit_code == 0 and out.output == "echo changed\necho changed\nkept\n", out.output
        finally:
            box.close()
    finally:
        warm.close()
    assert _containers("r1-before") == []
    assert not folder.exists()


def test_no_warm_side_for_a_run_folder_inside_the_workspace(tmp_path) -> None:
    ws = tmp_path / "ws"
    (ws / "home" / "runs" / "r1").mkdir(parents=True)
    asked: list[Path] = []
    warm = WarmSides(ws / "home" / "runs" / "r1", ws, asked.append)  # type: ignore[arg-type]
    warm.start()
    warm.close()
    assert asked == []
    assert os.listdir(ws / "home" / "runs" / "r1") == []


@pytest.mark.skipif(os.geteuid() != 0, reason="lending happens only when root owns the folder")
def test_another_command_leaves_a_live_runs_scratch_copies_lent_and_gives_back_a_dead_runs(tmp_path) -> None:
    from tether.common.limits import WorkspaceLimits
    from tether.common.liveness import Holder, mark_live
    from tether.runtime.workspace.handback import lending_record, settle_lendings
    from tether.sandbox.lending import LendingRecord
    from tether.sandbox.workspace import Handover

    home = tmp_path / "home"
    run_dir = home / "runs" / "r1"
    folder = run_dir / WARM_AFTER_DIR
    folder.mkdir(parents=True)
    (folder / "f").write_text("x")
    handover = Handover(folder, 1000, 1000)
    handover.record = LendingRecord(lending_record(home, folder))
    handover.give()  # as the warm after side's start does
    mark_live(run_dir, Holder.me("r1"))  # this process: the run still works
    assert settle_lendings(home, WorkspaceLimits()) == []
    assert folder.stat().st_uid == 1000 and (folder / "f").stat().st_uid == 1000
    dead = Holder.me("r1").model_copy(update={"start": "0"})  # the run's process is gone
    mark_live(run_dir, dead)
    notes = settle_lendings(home, WorkspaceLimits())
    assert len(notes) == 1 and str(folder) in notes[0]
    assert folder.stat().st_uid == 0 and (folder / "f").stat().st_uid == 0


def test_the_after_side_comes_with_its_processes_listed_before_anything_ran_in_it(setup, tmp_path) -> None:
    config, _ = setup
    warm, ws, run_dir = _warm(tmp_path, config)
    try:
        take, _ = warm.after_side(ws, lambda: pytest.fail("a cold side was started"), run_dir / "cold")
        box = take()
        try:
            assert isinstance(box, HandedSide) and box.start_processes is not None
            assert {p.key for p in box.start_processes} == {p.key for p in box.processes()}
        finally:
            box.close()
    finally:
        warm.close()
    assert _containers("r1-before") == []


def test_a_side_the_gate_is_done_with_is_removed_once_the_gate_ends(setup, tmp_path) -> None:
    config, _ = setup
    warm, ws, run_dir = _warm(tmp_path, config)
    try:
        take, folder = warm.before_side(lambda: pytest.fail("a cold side was started"), run_dir / "cold")
        box = take()
        assert box.exec("cat greet.sh").output == "echo hi\n"
        box.close()  # the before side is done while the after side may still work: not removed yet
        assert len(_containers("r1-before")) == 2 and folder.exists()
        warm.release()  # the gate's end
        warm.wait_started()
    finally:
        warm.close()
    assert _containers("r1-before") == []
    assert not folder.exists()
