"""`tether guard --explain` judges as `tether guard` does (the person's machine, the same workspace, working
folder and home): the same decision, the same exit code and the same rules, over rows of the workspace, secrets and
host corpora (issue 19: explain had counted a run's network ask that `tether guard` never gives)."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _explain_and_guard(command: str, workspace: str) -> tuple[dict, dict, int, int]:
    from tether.runtime.cli import guard_explain, guard_fast

    out = io.StringIO()
    with redirect_stdout(out):
        code_e = guard_explain.explain([command], True, Path(workspace), None, Path("/home/tether"),
                                       Path("/nonexistent-tether-home"))
    e = json.loads(out.getvalue())
    out = io.StringIO()
    with redirect_stdout(out):
        code_g = guard_fast.judge([command], True, Path(workspace), None, Path("/home/tether"))
    return e, json.loads(out.getvalue()), code_e, code_g


def _rows() -> list[tuple[str, str]]:
    rows = []
    for name in ("workspace_ordinary.jsonl", "workspace_holdout.jsonl", "secrets_escape_holdout.jsonl",
                 "host_round3.jsonl"):
        for line in (ROOT / "bench" / "corpora" / name).read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                rows.append((r["command"], r.get("workspace") or "/home/tether/project"))
    return rows[::3]


@pytest.mark.parametrize(("command", "workspace"), _rows())
def test_explain_gives_the_decision_and_exit_code_tether_guard_gives(command: str, workspace: str) -> None:
    e, g, code_e, code_g = _explain_and_guard(command, workspace)
    assert (e["decision"], code_e) == (g["decision"], code_g), (command, e["decision"], g)
    assert sorted({f["id"] for f in e["fired"] if f["decision"] != "allow"}) == sorted(set(g["rules"]))
