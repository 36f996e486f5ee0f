"""`tether eval examples/tasks --model scripted:task --json` on the real engine (issue 13).

The summary is recomputed here from the per-task table, straight from the
definitions (WikiTrace): a task is solved without memory when 2 of its 3
no-memory trials pass; Gain = passing trials on unsolved tasks / trials on
them; Regression = failing trials on solved tasks / trials on them; the noise
band is the Gain and Regression of the 3 rerun trials.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tether.runtime.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "examples" / "tasks"
pytestmark = pytest.mark.docker


def _eval(tmp_path: Path, image: str, trials: str = "1"):
    args = [
        "eval",
        str(TASKS),
        "--model",
        "scripted:task",
        "--image",
        image,
        "--json",
        "--jobs",
        "4",
        "--trials",
        trials,
        "--out",
        str(tmp_path / "out"),
        "--home",
        str(tmp_path / "home"),
    ]
    result = CliRunner().invoke(app, args, env={"TETHER_SANDBOX__DEFAULT_TIMEOUT_S": "30"})
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, json.loads(result.stdout) if result.stdout.strip() else None, result.stderr


def _recompute(table: list[dict]) -> dict:
    out = {}
    measured = [r for r in table if not r["skipped"]]
    solved = {r["task"]: sum(t["passed"] for t in r["methods"]["no-memory"]) >= 2 for r in measured}
    for method in ("memory", "lessons-only", "rerun"):
        gain = [t["passed"] for r in measured if not solved[r["task"]] for t in r["methods"][method]]
        reg = [not t["passed"] for r in measured if solved[r["task"]] for t in r["methods"][method]]
        out[method] = ((sum(gain), len(gain)), (sum(reg), len(reg)))
    return out


def test_eval_runs_every_method_and_its_numbers_follow_from_the_table(tmp_path, tiny_image) -> None:
    code, report, err = _eval(tmp_path, tiny_image)
    assert code == 0, err
    progress = [line for line in err.splitlines() if line.startswith("[") and "/" in line.split("]")[0]]
    total = int(progress[0].split("/")[1].split("]")[0])
    assert len(progress) == total and sum(f"[{total}/{total}]" in line for line in progress) == 1, progress
    assert "so far" in progress[0] and "left" in "".join(progress[1:-1])
    assert "beyond the noise band" in err and "beyond the noise band" in (tmp_path / "out" / "eval.md").read_text()
    table = {r["task"]: r for r in report["table"]}
    assert sorted(table) == ["csv-count", "greet-script", "json-version", "py-report", "sort-numbers"]  # test/ only
    assert "not present locally" in table["py-report"]["skipped"]
    for name, row in table.items():
        if row["skipped"]:
            continue
        counts = {m: len(row["methods"][m]) for m in ("no-memory", "rerun", "memory", "lessons-only")}
        assert counts == {"no-memory": 3, "rerun": 3, "memory": 1, "lessons-only": 1}, name
    # What the scenarios play: memory fixes csv-count (it learnt ';' on train/), lessons-only
    # misapplies that lesson to JSON, sort-numbers is noisy without memory.
    assert table["csv-count"]["reference"] == {"trials": [False] * 3, "majority": False}
    assert [t["passed"] for t in table["csv-count"]["methods"]["memory"]] == [True]
    assert [t["passed"] for t in table["json-version"]["methods"]["lessons-only"]] == [False]
    assert table["sort-numbers"]["reference"] == {"trials": [True, True, False], "majority": True}
    assert table["greet-script"]["methods"]["no-memory"][0]["reason"] == "reward.txt = 1"  # Harbor-style test.sh

    expected = _recompute(report["table"])
    summary = report["summary"]
    for method, (gain, regression) in expected.items():
        for name, (k, n) in (("gain", gain), ("regression", regression)):
            got = summary["methods"][method][name]
            assert (got["k"], got["n"]) == (k, n), (method, name)
            assert got["value"] == pytest.approx(k / n, abs=5e-5)
    (gk, gn), (rk, rn) = expected["rerun"]
    assert summary["noise_band"] == {
        "gain": pytest.approx(gk / gn, abs=5e-5),
        "regression": pytest.approx(rk / rn, abs=5e-5),
    }
    assert expected["memory"] == ((1, 1), (0, 3)) and expected["lessons-only"] == ((1, 1), (1, 3))
    assert expected["rerun"] == ((0, 3), (2, 9))
    assert summary["interval"] == "wilson-95" and summary["methods"]["memory"]["regression"]["ci95"][1] > 0
    cost = summary["methods"]["memory"]["cost_per_task"]
    assert cost["model_calls"] > 0 and cost["tokens"] > 0 and cost["memory_tokens"] > 0 and cost["wall_s"] > 0
    assert summary["methods"]["lessons-only"]["cost_per_task"]["memory_tokens"] == 0
    assert report["training"]["runs"] == 2

    # The memory the test cells started from was learnt on train/: csv-count's run relied on that lesson.
    cell = tmp_path / "out" / "cells" / "csv-count" / "memory-1"
    [run] = (cell / "home" / "runs").iterdir()
    used = json.loads((run / "memory.json").read_text())["lessons_used"]
    assert used and all(u.startswith("L-") for u in used)
    assert (tmp_path / "out" / "eval.md").read_text().count("|") > 20
    # lessons-only got the same lesson with no sources and no descent rules; memory got both.
    [lessons_run] = (tmp_path / "out" / "cells" / "csv-count" / "lessons-only-1" / "home" / "runs").iterdir()
    bare = json.loads((lessons_run / "run.json").read_text())["memory_context"]
    full = json.loads((run / "run.json").read_text())["memory_context"]
    assert used[0] in bare and "/memory" not in bare and "first action" not in bare
    assert used[0] in full and "/memory/runs/" in full and "before your first action" in full

    # Resume: kept cells are not run again; a cell without a result (interrupted) runs again.
    kept = json.loads((tmp_path / "out" / "cells" / "greet-script" / "rerun-2" / "result.json").read_text())["run_id"]
    (cell / "result.json").unlink()
    before = report["table"]
    code, again, err = _eval(tmp_path, tiny_image)
    assert code == 0, err
    rerun = next(r for r in again["table"] if r["task"] == "csv-count")["methods"]["memory"][0]
    assert rerun["run_id"] != table["csv-count"]["methods"]["memory"][0]["run_id"] and rerun["passed"]
    assert (
        json.loads((tmp_path / "out" / "cells" / "greet-script" / "rerun-2" / "result.json").read_text())["run_id"]
        == kept
    )
    assert [r["reference"] for r in again["table"]] == [r["reference"] for r in before]

    # Other settings in the same folder are refused, not mixed in.
    code, _, err = _eval(tmp_path, tiny_image, trials="2")
    assert code == 2 and "other settings" in err
