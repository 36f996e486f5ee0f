"""Bounds and messages (issue 24, item 6): each error a person met as a traceback or a silent failure is one line.

Scenario and config files are parsed with limits; model answers over
`model.max_answer_bytes`, nested past every sane depth or with malformed tool
calls are refused or flagged, journaled bounded and shown by `tether show`;
config values that overflowed the engine's client are refused by name; an
ask refused because nobody was there names --yes and --ask-later.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from langchain_core.messages import AIMessage
from typer.testing import CliRunner

from tether.common.events import ModelAnswerRefused, read_events
from tether.common.journal import Journal
from tether.graphs.common import screen_answer
from tether.graphs.context import RunContext
from tether.runtime.cli.app import app

pytestmark = pytest.mark.docker
SCENARIOS = Path(__file__).parent / "scenarios"
PLAN = {"tool_calls": [{"name": "submit_plan", "args": {"steps": [
    {"id": "s1", "description": "write", "depends_on": [], "verify": "grep -q ok a.txt"}]}}]}
ACT = [{"tool_calls": [{"name": "run_shell", "args": {"command": "echo ok > a.txt"}}]},
       {"tool_calls": [{"name": "run_shell", "args": {"command": "grep -q ok a.txt"}},
                       {"name": "finish_step", "args": {"summary": "ok", "files_changed": ["a.txt"],
                                                        "evidence": "grep -q ok a.txt"}}]}]
SUMMARY = [{"tool_calls": [{"name": "submit_summary", "args": {
    "text": "a.txt says ok", "files": ["a.txt"], "commands": ["grep -q ok a.txt"],
    "claims": [{"text": "a.txt says ok", "command": "grep -q ok a.txt"}]}}]}]


def _write(tmp_path: Path, planner: list) -> Path:
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump({"goal": "Write ok to a.txt.", "responses": {
        "planner": planner, "actor": {"s1": ACT}, "summarizer": SUMMARY}}), encoding="utf-8")
    return path


def test_a_huge_model_answer_is_refused_with_a_line_and_never_resent(tether, tmp_path):
    huge = {"text": "x" * 1_200_000, **PLAN}
    tether.env["TETHER_MODEL__MAX_ANSWER_BYTES"] = "100000"
    code, out, err = tether.run(_write(tmp_path, [huge, PLAN]), "--no-memory")
    assert out["status"] == "success", (out["reason"], err)
    journal = tether.home / "runs" / out["run_id"] / "journal.jsonl"
    assert max(len(line) for line in journal.read_bytes().splitlines()) < 20_000, "the answer is not journaled whole"
    refused = [e for e in read_events(journal) if isinstance(e, ModelAnswerRefused)]
    assert len(refused) == 1 and "over model.max_answer_bytes (100,000)" in refused[0].problem
    assert refused[0].size > 1_200_000 and len(refused[0].raw) < 5000
    _, shown, _ = tether.cli("show", out["run_id"])
    assert shown["answers"][0]["problem"] == refused[0].problem
    assert "over model.max_answer_bytes" in shown["plan_rejections"][0]


def test_a_malformed_tool_call_is_kept_and_shown(tether, tmp_path):
    bad = {"text": "here is the plan", "invalid_tool_calls": [
        {"name": "submit_plan", "args": '{"steps": [{"id": "s1", "description": "write"', "error": "Unterminated"}]}
    code, out, err = tether.run(_write(tmp_path, [bad, PLAN]), "--no-memory")
    assert out["status"] == "success", (out["reason"], err)
    _, shown, _ = tether.cli("show", out["run_id"])
    [answer] = shown["answers"]
    assert "malformed call to submit_plan: Unterminated" in answer["problem"]
    assert '{"steps": [{"id": "s1", "description": "write"' in answer["raw"]
    assert "malformed call to submit_plan" in shown["plan_rejections"][0]
    result = CliRunner().invoke(app, ["show", out["run_id"], "--home", str(tether.home)], env=tether.env)
    assert "model answer not used" in result.stdout and "Unterminated" in result.stdout


def test_tool_call_arguments_nested_3000_deep_are_refused(tmp_path):
    deep: object = "leaf"
    for _ in range(3000):
        deep = [deep]
    journal = Journal(tmp_path / "journal.jsonl")
    ctx = RunContext(run_id="r", model=None, sandbox=None, journal=journal)  # type: ignore[arg-type]
    ai = AIMessage(content="", tool_calls=[{"name": "submit_plan", "args": {"steps": deep}, "id": "c1"}])
    screened = screen_answer(ctx, ai, "planner", "", 0)
    assert not screened.tool_calls and "nested deeper than 64 levels" in str(screened.content)
    journal.close()
    [event] = read_events(tmp_path / "journal.jsonl")
    assert isinstance(event, ModelAnswerRefused) and len(event.raw) < 5000


@pytest.mark.parametrize("name", ["bomb", "deep", "huge"])
def test_hostile_scenario_files_are_one_line(tether, tmp_path, name):
    path = tmp_path / f"{name}.yaml"
    if name == "bomb":
        pairs = zip("abcdefgh", "bcdefghi", strict=True)
        levels = "".join(f"  {c}: &{c} [" + ",".join([f"*{p}"] * 9) + "]\n" for p, c in pairs)
        path.write_text("x:\n  a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n" + levels + "goal: *i\n")
    elif name == "deep":
        path.write_text("goal: x\nresponses:\n  planner:\n    " + "- " * 3000 + "x\n")
    else:
        path.write_text("goal: " + "y" * (5 << 20) + "\n")
    code, out, err = tether.run(path)
    assert code == 2 and out is None
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert {"bomb": "alias", "deep": "nested deeper", "huge": "larger than"}[name] in err


@pytest.mark.parametrize(("env", "needle"), [
    ({"TETHER_SANDBOX__DEFAULT_TIMEOUT_S": "1e308"}, "sandbox.default_timeout_s"),
    ({"TETHER_SANDBOX__DEFAULT_TIMEOUT_S": "inf"}, "sandbox.default_timeout_s"),
    ({"TETHER_SANDBOX__IMAGE": ""}, "sandbox.image"),
    ({"TETHER_SANDBOX__IMAGE": "bad name with spaces"}, "sandbox.image"),
    ({"TETHER_SANDBOX__CPUS": "1e308"}, "sandbox.cpus"),
    ({"TETHER_SANDBOX__MEMORY": "lots"}, "sandbox.memory"),
    ({"TETHER_RUN__VERIFY": "[" * 3000 + "]" * 3000}, "nested too deep"),
])
def test_bad_config_values_are_refused_by_name(tether, env, needle):
    tether.env.update(env)
    code, out, err = tether.run(SCENARIOS / "pip-ask.yaml")
    assert code == 2 and needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_an_ask_refused_for_want_of_a_person_says_so(tether):
    code, out, _ = tether.run(SCENARIOS / "guarded.yaml", "--no-memory")
    assert out["status"] == "failed"
    assert "nobody was at a terminal" in out["reason"] and "--yes" in out["reason"] and "--ask-later" in out["reason"]
    meta = json.loads((tether.home / "runs" / out["run_id"] / "run.json").read_text())
    assert "--ask-later" in meta["reason"]


def test_the_size_limit_message_states_real_figures():
    from tether.common.limits import WorkspaceLimits
    from tether.common.manifest import Scan

    small = Scan(apparent=150 * 2**20).over_limit(WorkspaceLimits(max_bytes=100 * 2**20))
    assert small is not None and "150 MiB" in small and "50 MiB over the limit of 100 MiB" in small
    disk = Scan(allocated=3 * 2**30 + 2**29).over_limit(WorkspaceLimits(max_allocated_bytes=3 * 2**30))
    assert disk is not None and "3.50 GiB on disk, 512 MiB over the limit of 3 GiB" in disk
    assert "0.0 GiB" not in small + disk
