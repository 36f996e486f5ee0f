"""The eval's pure parts: Wilson intervals, task folders, scenario names, bad input (issue 13)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tether.common.errors import ConfigError
from tether.runtime.cli.app import app
from tether.runtime.eval.stats import summarize, wilson
from tether.runtime.eval.tasks import load_tasks, scenario_for

TASKS = Path(__file__).resolve().parents[2] / "examples" / "tasks"


def test_wilson_interval_matches_the_formula() -> None:
    assert wilson(0, 0) is None
    lo, hi = wilson(2, 9)
    assert (lo, hi) == (pytest.approx(0.0632, abs=1e-4), pytest.approx(0.5474, abs=1e-4))
    assert wilson(3, 3)[1] == 1.0 and wilson(0, 3)[0] == 0.0


def _row(task, ref, **methods):
    cells = {m: [{"passed": p, "status": "done", "model_calls": 1, "tokens": 10, "memory_calls": 0,
                  "memory_tokens": 0, "wall_s": 1.0} for p in ps] for m, ps in {"no-memory": ref, **methods}.items()}
    return {"task": task, "skipped": None, "methods": cells}


def test_summary_follows_the_definitions() -> None:
    rows = [
        _row("a", [False, False, True], memory=[True], rerun=[False, True, True]),   # unsolved (1 of 3)
        _row("b", [True, True, False], memory=[False], rerun=[True, True, True]),    # solved (2 of 3)
        _row("c", [True, True, True], memory=[True], rerun=[True, False, True]),
        {**_row("d", [True, True, True], memory=[False]), "skipped": "no image"},   # never counted
    ]
    s = summarize(rows)
    assert (s["tasks_measured"], s["tasks_solved_without_memory"]) == (3, 2)
    assert s["methods"]["memory"]["gain"] | {"ci95": None} == {"value": 1.0, "k": 1, "n": 1, "ci95": None}
    assert (s["methods"]["memory"]["regression"]["k"], s["methods"]["memory"]["regression"]["n"]) == (1, 2)
    assert s["noise_band"] == {"gain": pytest.approx(2 / 3, abs=1e-4), "regression": pytest.approx(1 / 6, abs=1e-4)}


def test_task_folders_and_scenarios(tmp_path) -> None:
    ts = load_tasks(TASKS)
    assert ts.split and [t.name for t in ts.train] == ["csv-max", "csv-total"]
    sort = next(t for t in ts.test if t.name == "sort-numbers")
    assert scenario_for(sort, "no-memory", 3).name == "no-memory-3.yaml"
    assert scenario_for(sort, "rerun", 1).name == "no-memory.yaml"  # rerun falls back to no-memory
    assert scenario_for(sort, "rerun", 2).name == "rerun-2.yaml"
    py = next(t for t in ts.test if t.name == "py-report")
    assert scenario_for(py, "memory", 1).name == "default.yaml"
    bad = tmp_path / "tasks" / "t1"
    (bad / "tests").mkdir(parents=True)
    with pytest.raises(ConfigError, match="no instruction.md"):
        load_tasks(tmp_path / "tasks")
    (bad / "instruction.md").write_text("Do it.")
    (bad / "tests" / "test.sh").write_text("exit 0")
    with pytest.raises(ConfigError, match="add scripted/memory.yaml"):
        scenario_for(load_tasks(tmp_path / "tasks").test[0], "memory", 1)


def test_bad_input_is_one_line_and_exit_2(tmp_path) -> None:
    result = CliRunner().invoke(
        app, ["eval", str(tmp_path / "nope"), "--model", "scripted:task", "--home", str(tmp_path)]
    )
    assert result.exit_code == 2 and "does not exist" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    (tmp_path / "tasks" / "t1" / "tests").mkdir(parents=True)
    (tmp_path / "tasks" / "t1" / "instruction.md").write_text("Do it.")
    (tmp_path / "tasks" / "t1" / "tests" / "test.sh").write_text("exit 0")
    result = CliRunner().invoke(
        app, ["eval", str(tmp_path / "tasks"), "--model", "scripted:task", "--home", str(tmp_path)]
    )
    assert result.exit_code == 2 and "no scripted scenario" in result.stderr
    assert not (tmp_path / "evals").exists()  # nothing started


def test_cells_run_in_memory_chain_order(tmp_path) -> None:
    from tether.runtime.config import load_config
    from tether.runtime.eval.cells import EvalContext
    from tether.runtime.eval.run import EvalOptions, plan_cells

    ts = load_tasks(TASKS)
    options = EvalOptions(tasks=TASKS, model_spec="scripted:task", out=tmp_path, trials=2)
    ctx = EvalContext(config=load_config(tmp_path / "home", environ={}), model_spec="scripted:task", out=tmp_path,
                      project="eval:tasks", images={})
    phases = plan_cells(ts, options, ctx)
    names = [[c.name for c in p] for p in phases]
    # baselines and the first training step together, then the second training step, then every test cell
    assert {n for n in names[0] if "train" in n} == {"csv-max/train-1", "csv-max/train-2"}
    assert names[1] == ["csv-total/train-1", "csv-total/train-2"]
    test_cells = {c.name: c for c in phases[2]}
    assert len(test_cells) == 5 * 2 * 2  # five test tasks x (memory, lessons-only) x 2 trials
    trained = [tmp_path / "cells" / "csv-total" / "train-2" / "home" / "memory",
               tmp_path / "cells" / "csv-max" / "train-2" / "home" / "memory"]
    assert test_cells["csv-count/memory-2"].memory_from == trained
    assert test_cells["csv-count/lessons-only-2"].memory_from == trained  # the same memory, read without sources
    assert sum(c.method == "no-memory" for c in phases[0]) == 15 and sum(c.method == "rerun" for c in phases[0]) == 15


def test_the_verdict_sentence_says_whether_memory_helped_beyond_the_noise():
    from tether.runtime.eval.stats import verdict

    def summary(gain, reg, noise_gain, noise_reg, n=12):
        rate = lambda v: {"value": v, "k": 0, "n": 0, "ci95": None}  # noqa: E731
        return {"tasks_measured": n, "methods": {"memory": {"gain": rate(gain), "regression": rate(reg)}},
                "noise_band": {"gain": noise_gain, "regression": noise_reg}}

    assert verdict(summary(0.5, 0.0, 0.1, 0.05)).startswith("Memory helped beyond the noise band: Gain 50%")
    assert verdict(summary(0.1, 0.3, 0.1, 0.05)).startswith("Memory hurt beyond the noise band")
    assert verdict(summary(0.1, 0.05, 0.1, 0.05)).startswith("Memory did not help beyond the noise band")
    assert "intervals are wide" in verdict(summary(0.5, 0.0, 0.1, 0.0, n=3))
    assert verdict(summary(None, None, None, None, n=0)).startswith("No task was measured")
