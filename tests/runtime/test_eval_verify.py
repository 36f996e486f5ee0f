"""The eval's verifier on the real engine: the reward file decides, and the agent cannot plant it (issue 13)."""

from __future__ import annotations

import pytest

from tether.runtime.eval.sandbox import verify
from tether.runtime.eval.tasks import Task
from tether.sandbox.config import DockerSandboxConfig

pytestmark = pytest.mark.docker

HARBOR = (
    "mkdir -p /logs/verifier\nif [ -f done.txt ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > "
    "/logs/verifier/reward.txt; fi\nexit 0\n"
)


def _task(tmp_path, test_sh: str) -> Task:
    folder = tmp_path / "task"
    (folder / "tests").mkdir(parents=True)
    (folder / "tests" / "test.sh").write_text(test_sh)
    return Task(name="t", path=folder, split="all", instruction="x")


def test_reward_file_decides_over_the_exit_status(tmp_path, tiny_image) -> None:
    task = _task(tmp_path, HARBOR)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "reward.txt").write_text("1\n")  # planted by the agent: never read
    (ws / "logs").mkdir()
    cfg = DockerSandboxConfig(image=tiny_image, default_timeout_s=30)
    cell = tmp_path / "cell"
    cell.mkdir()
    assert verify(task, ws, cfg, cell, "rw-1", 60) == (False, "reward.txt = 0")  # exit 0, reward 0: a failure
    (ws / "done.txt").write_text("yes")
    assert verify(task, ws, cfg, cell, "rw-2", 60) == (True, "reward.txt = 1")
    assert "/logs/verifier" in (task.tests / "test.sh").read_text()  # the task's own file is untouched


def test_without_a_reward_file_the_exit_status_decides(tmp_path, tiny_image) -> None:
    task = _task(tmp_path, "[ -f /tests/test.sh ] && grep -q yes done.txt\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "done.txt").write_text("no")
    cfg = DockerSandboxConfig(image=tiny_image, default_timeout_s=30)
    cell = tmp_path / "cell"
    cell.mkdir()
    assert verify(task, ws, cfg, cell, "ex-1", 60) == (False, "test.sh exit 1")
    (ws / "done.txt").write_text("yes")
    assert verify(task, ws, cfg, cell, "ex-2", 60) == (True, "test.sh exit 0")


def test_a_cell_that_cannot_run_is_listed_and_retried(tmp_path, tiny_image) -> None:
    from tether.runtime.config import load_config
    from tether.runtime.eval.run import EvalOptions, run_eval

    task = tmp_path / "tasks" / "t1"
    for sub in ("tests", "scripted", "environment"):
        (task / sub).mkdir(parents=True)
    (task / "instruction.md").write_text("Create done.txt.")
    (task / "tests" / "test.sh").write_text("[ -f done.txt ]\n")
    (task / "scripted" / "default.yaml").write_text("responses: [unclosed\n")  # broken: every cell errors
    cfg = load_config(tmp_path / "home", environ={})
    options = EvalOptions(tasks=tmp_path / "tasks", model_spec="scripted:task", out=tmp_path / "out", image=tiny_image,
                          reference_trials=1, rerun_trials=0, trials=1)
    report = run_eval(cfg, options)
    assert len(report["errors"]) == 3 and "not valid YAML" in report["errors"][0]
    assert report["summary"]["tasks_measured"] == 0  # an error is never counted as a failure
    result = tmp_path / "out" / "cells" / "t1" / "no-memory-1" / "result.json"
    assert '"status": "error"' in result.read_text()
