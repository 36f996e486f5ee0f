"""A run records its model's provider and endpoint; resume, approve and deny talk only to that endpoint.

The issue's case: a run made against a local OpenAI-compatible server,
resumed in a shell without the base-URL variable, must not send the
conversation to the public endpoint. Runs here use the scripted model (no
LLM is reachable); a run "made against a local server" is a paused run
whose recorded model is switched to that in run.json, as an older or other
run would have it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tether.common.errors import ConfigError
from tether.runtime.config import ModelConfig
from tether.runtime.models.registry import check_endpoint, endpoint_of

SCENARIOS = Path(__file__).parent / "scenarios"
pytestmark = pytest.mark.docker


def test_endpoints_of_each_provider():
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1/"}
    assert endpoint_of(ModelConfig(spec="openai:m"), env) == "http://127.0.0.1:8000/v1"
    assert endpoint_of(ModelConfig(spec="openai:m"), {}) == "https://api.openai.com/v1"
    assert endpoint_of(ModelConfig(spec="openai:m", base_url="http://h:1/v1"), env) == "http://h:1/v1"
    assert endpoint_of(ModelConfig(spec="ollama:m"), {"OLLAMA_HOST": "10.0.0.2:11434"}) == "http://10.0.0.2:11434"
    assert endpoint_of(ModelConfig(spec="anthropic:m"), {}) == "https://api.anthropic.com"
    meta = {"run_id": "r1", "model_spec": "openai:m", "model_endpoint": "http://127.0.0.1:8000/v1"}
    check_endpoint(ModelConfig(), meta, env)
    with pytest.raises(ConfigError) as e:
        check_endpoint(ModelConfig(), meta, {})
    assert "http://127.0.0.1:8000/v1" in str(e.value) and "https://api.openai.com/v1" in str(e.value)
    with pytest.raises(ConfigError, match="does not record"):
        check_endpoint(ModelConfig(), {"run_id": "r0", "model_spec": "openai:m"}, env)


def _paused(tether, tmp_path):
    scenario = tmp_path / "pip-ask.yaml"
    shutil.copy(SCENARIOS / "pip-ask.yaml", scenario)
    code, out, err = tether.run(scenario, "--ask-later", "--no-memory")
    assert code == 3 and out["awaiting"], err
    meta_path = tether.home / "runs" / out["run_id"] / "run.json"
    meta = json.loads(meta_path.read_text())
    assert meta["model_endpoint"] == f"file:{scenario.resolve()}"
    return out["run_id"], meta_path, scenario


def test_a_run_made_against_a_local_server_is_not_resumed_against_the_public_one(tether, tmp_path):
    run_id, meta_path, scenario = _paused(tether, tmp_path)
    meta = json.loads(meta_path.read_text())
    meta_path.write_text(json.dumps({**meta, "model_spec": "openai:local-model",
                                     "model_endpoint": "http://127.0.0.1:8000/v1"}))
    tether.env.pop("OPENAI_BASE_URL", None)
    journal = (tether.home / "runs" / run_id / "journal.jsonl").read_bytes()
    for verb in ("resume", "approve", "deny"):
        code, _, err = tether.cli(verb, run_id)
        assert code == 2, err
        assert "http://127.0.0.1:8000/v1" in err and "https://api.openai.com/v1" in err and "--model" in err, err
        assert "Traceback" not in err
    assert (tether.home / "runs" / run_id / "journal.jsonl").read_bytes() == journal, "nothing was sent or written"
    code, out, err = tether.cli("approve", run_id, "--model", f"scripted:{scenario}")
    assert code == 0 and out["status"] == "success", err
    assert json.loads(meta_path.read_text())["model_endpoint"] == f"file:{scenario.resolve()}"


def test_a_moved_scenario_is_another_endpoint(tether, tmp_path):
    run_id, _, scenario = _paused(tether, tmp_path)
    moved = tmp_path / "other.yaml"
    shutil.copy(scenario, moved)
    code, _, err = tether.cli("deny", run_id, "--model", "scripted:/nonexistent/x.yaml")
    assert code == 2 and "nonexistent" in err and "Traceback" not in err
    code, out, err = tether.cli("deny", run_id, "--model", f"scripted:{moved}")
    assert code in (0, 1, 4) and out["status"] != "interrupted", err
