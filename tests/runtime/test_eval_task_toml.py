"""Harbor task.toml honoured by `tether eval` (timeouts, cpus, memory), and an eval with nothing measured fails."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tether.common.errors import ConfigError
from tether.runtime.cli.app import app
from tether.runtime.config import load_config
from tether.runtime.eval.cells import Cell, EvalContext, _configs
from tether.runtime.eval.task_config import load_settings
from tether.runtime.eval.tasks import load_tasks

ROOT = Path(__file__).resolve().parents[2]
PY_REPORT = ROOT / "examples" / "tasks" / "test" / "py-report"


def _task(tmp_path: Path, toml: str) -> Path:
    folder = tmp_path / "tasks" / "t1"
    (folder / "tests").mkdir(parents=True)
    (folder / "instruction.md").write_text("Do it.")
    (folder / "tests" / "test.sh").write_text("exit 0")
    (folder / "task.toml").write_text(toml)
    return folder


def test_task_toml_settings_are_read(tmp_path):
    folder = _task(tmp_path, 'version = "1.0"\n[metadata]\nauthor = "x"\n[agent]\ntimeout_sec = 300.0\n'
                             '[verifier]\ntimeout_sec = 120\n[environment]\nbuild_timeout_sec = 600.0\ncpus = 2\n'
                             'memory = "4G"\nstorage = "10G"\n')
    s = load_settings(folder)
    assert (s.agent_timeout_s, s.verifier_timeout_s, s.build_timeout_s, s.cpus, s.memory_mb) == (300, 120, 600, 2, 4096)
    (folder / "task.toml").write_text("[environment]\nmemory_mb = 2048\n")
    assert load_settings(folder).memory_mb == 2048 and load_settings(folder).cpus is None
    (folder / "task.toml").unlink()
    assert load_settings(folder).model_dump() == dict.fromkeys(s.model_dump())


@pytest.mark.parametrize("toml", ["[agent]\ntimeout_sec = -1\n", "[agent]\ntimeout_sec = true\n",
                                  '[environment]\ncpus = "two"\n', '[environment]\nmemory = "lots"\n',
                                  "[environment]\nmemory = 4\n", '[environment]\nmemory = "1K"\n', "[agent\n"])
def test_task_toml_bad_values_are_one_line_naming_the_file(tmp_path, toml):
    _task(tmp_path, toml)
    with pytest.raises(ConfigError, match="task.toml"):
        load_tasks(tmp_path / "tasks")


def test_task_toml_limits_reach_the_runs_sandbox_and_budget(tmp_path):
    _task(tmp_path, "[agent]\ntimeout_sec = 90\n[environment]\ncpus = 2\nmemory_mb = 1024\n")
    task = load_tasks(tmp_path / "tasks").test[0]
    cfg = load_config(tmp_path / "home", cwd=tmp_path, environ={})
    ctx = EvalContext(config=cfg, model_spec="scripted:task", out=tmp_path / "out", project="p", images={})
    run_cfg, _ = _configs(ctx, Cell(task=task, method="no-memory", trial=1), tmp_path / "h", "img:1")
    assert (run_cfg.sandbox.cpus, run_cfg.sandbox.memory, run_cfg.run.max_seconds) == (2, "1024m", 90)
    assert run_cfg.sandbox.image == "img:1"


@pytest.mark.docker
def test_eval_with_nothing_measured_exits_non_zero_and_says_how_to_load_the_image(tmp_path, docker_client):
    shutil.copytree(PY_REPORT, tmp_path / "tasks" / "py-report")
    args = ["eval", str(tmp_path / "tasks"), "--model", "scripted:task", "--json", "--out", str(tmp_path / "out"),
            "--home", str(tmp_path / "home")]
    result = CliRunner().invoke(app, args)
    report = json.loads(result.stdout)
    assert result.exit_code == 1, result.stderr
    assert "no task was measured" in result.stderr and report["summary"]["tasks_measured"] == 0
    [row] = report["table"]
    assert "docker load" in row["skipped"] and "docker pull" in row["skipped"]
