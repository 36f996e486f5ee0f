"""`tether run --verify` and `[run] verify`: bad input is one line and exit 2; the checks reach the run."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from tether.runtime.cli.app import app
from tether.runtime.config import RunConfig

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "verified-success.yaml"


def test_an_empty_verify_check_is_refused_before_anything_starts(tmp_path):
    result = CliRunner().invoke(app, ["run", "--model", f"scripted:{EXAMPLE}", "--workspace", str(tmp_path),
                                      "--verify", " ", "--home", str(tmp_path / "home")])
    assert result.exit_code == 2
    assert "empty --verify" in result.output and len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "home" / "runs").exists() or not any((tmp_path / "home" / "runs").iterdir())


def test_run_verify_is_a_list_of_commands_in_the_config():
    assert RunConfig(verify=["python3 -m unittest"]).verify == ["python3 -m unittest"]
    assert RunConfig().verify == [] and RunConfig().verify_timeout_s > 0
