"""`tether guard`: exit codes, --json, --batch, through typer and as a new process (the hook path)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tether.runtime.cli.app import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("command", "code"), [("ls -la", 0), ("git reset --hard", 1), ("rm -rf /", 2)])
def test_exit_codes(command: str, code: int, tmp_path: Path) -> None:
    r = runner.invoke(app, ["guard", "--workspace", str(tmp_path / "ws" / "p"), "--", command])
    assert r.exit_code == code, r.output


def test_json_output(tmp_path: Path) -> None:
    r = runner.invoke(app, ["guard", "--json", "--workspace", "/home/t/ws", "--", "rm", "-rf", "/"])
    obj = json.loads(r.stdout.strip().splitlines()[-1])
    assert set(obj) == {"command", "decision", "rules", "reason", "decoded"}
    assert obj["decision"] == "deny" and obj["rules"] == ["FS-001"] and r.exit_code == 2


def test_batch(tmp_path: Path) -> None:
    f = tmp_path / "in.jsonl"
    f.write_text('{"command": "ls"}\n\n{"command": "rm -rf build", "cwd": "/home/t"}\n')
    r = runner.invoke(app, ["guard", "--batch", str(f), "--workspace", "/home/t/ws"])
    rows = [json.loads(line) for line in r.stdout.strip().splitlines()]
    assert r.exit_code == 0
    assert [x["decision"] for x in rows] == ["allow", "ask"]
    assert set(rows[0]) == {"command", "decision", "rules", "reason"}


@pytest.mark.parametrize("content", [None, "not json\n", '{"cmd": 1}\n'])
def test_batch_unreadable(content: str | None, tmp_path: Path) -> None:
    f = tmp_path / "in.jsonl"
    if content is not None:
        f.write_text(content)
    r = runner.invoke(app, ["guard", "--batch", str(f)])
    assert r.exit_code == 2


def test_no_command_is_an_error() -> None:
    assert runner.invoke(app, ["guard"]).exit_code == 2


def _tether(*args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "tether", *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, check=False, **kw)  # type: ignore[call-overload]


@pytest.mark.parametrize(("command", "code"), [("ls -la", 0), ("git reset --hard", 1), ("rm -rf /", 2)])
def test_process_exit_codes_and_json_match_the_typer_app(command: str, code: int) -> None:
    r = _tether("guard", "--json", "--workspace", "/home/t/ws/p", "--", command)
    typer_run = runner.invoke(app, ["guard", "--json", "--workspace", "/home/t/ws/p", "--", command])
    assert r.returncode == code == typer_run.exit_code, r.stderr
    assert json.loads(r.stdout) == json.loads(typer_run.stdout.strip().splitlines()[-1])


def test_process_plain_output_and_errors(tmp_path: Path) -> None:
    r = _tether("guard", "--workspace=/home/t/ws", "--", "rm", "-rf", "/")
    assert r.returncode == 2 and r.stdout.startswith("deny  rm -rf /") and "FS-001" in r.stdout
    r = _tether("guard")
    assert r.returncode == 2 and r.stderr.startswith("error: give a command")
    r = _tether("guard", "--batch", str(tmp_path / "missing.jsonl"))
    assert r.returncode == 2 and "cannot read batch" in r.stderr and len(r.stderr.splitlines()) == 1
    f = tmp_path / "in.jsonl"
    f.write_text('{"command": "ls"}\n{"command": "rm -rf /"}\n')
    r = _tether("guard", "--batch", str(f), "--workspace", "/home/t/ws")
    assert r.returncode == 0 and [json.loads(x)["decision"] for x in r.stdout.splitlines()] == [
        "allow", "deny"]


def test_process_help_and_unknown_options_go_to_typer() -> None:
    assert _tether("guard", "--help").returncode == 0
    assert _tether("guard", "--bogus", "--", "ls").returncode == 2


def test_hook_path_imports_no_heavy_module() -> None:
    code = ("import sys; sys.argv = ['tether', 'guard', '--json', '--', 'ls -la']\n"
            "from tether.runtime.cli import app as cli\n"
            "try:\n    cli.main()\nexcept SystemExit as e:\n    code = e.code\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('pydantic', 'typer', 'rich', 'langgraph', 'langchain_core', 'qdrant_client', 'docker', 'yaml')"
            " or m.startswith(('tether.memory', 'tether.sandbox', 'tether.graphs', 'tether.gate'))"
            " or m == 'tether.runtime.config')\n"
            "print(code, heavy)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       check=False)
    assert r.stdout.strip().splitlines()[-1] == "0 []", r.stdout + r.stderr


def test_argv_after_dashes_is_quoted_not_joined() -> None:
    # `bash -c "rm -rf /"` arrives as three words; joined unquoted it would read `bash -c rm -rf /` (allow)
    r = runner.invoke(app, ["guard", "--json", "--workspace", "/home/t/ws/p", "--", "bash", "-c", "rm -rf /"])
    obj = json.loads(r.stdout.strip().splitlines()[-1])
    assert obj["command"] == "bash -c 'rm -rf /'" and obj["decision"] == "deny" and r.exit_code == 2
    r = _tether("guard", "--json", "--workspace", "/home/t/ws/p", "--", "bash", "-c", "rm -rf /")
    assert r.returncode == 2 and json.loads(r.stdout)["command"] == "bash -c 'rm -rf /'"
    one = _tether("guard", "--json", "--workspace", "/home/t/ws/p", "--", "ls -la && git status")
    assert one.returncode == 0 and json.loads(one.stdout)["command"] == "ls -la && git status"


@pytest.mark.parametrize("fast", [True, False])
def test_user_home_is_the_persons_home_and_home_is_tethers(fast: bool, tmp_path: Path) -> None:
    def run(*args: str) -> tuple[int, dict[str, object]]:
        argv = ["guard", "--json", "--workspace", "/home/p/proj", *args, "--", "rm -rf ~/proj/build"]
        if fast:
            r = _tether(*argv)
            return r.returncode, json.loads(r.stdout)
        t = runner.invoke(app, argv)
        return t.exit_code, json.loads(t.stdout.strip().splitlines()[-1])

    assert run("--user-home", "/home/p")[0] == 0
    code, obj = run("--user-home", "/home/q")
    assert code == 1 and obj["rules"] == ["CONF-001"]
    code, _ = run("--home", str(tmp_path / "tether-home"), "--user-home", "/home/p")  # Tether's home: no effect on ~
    assert code == 0


def test_python_api_is_stable_and_agrees_with_the_cli() -> None:
    import inspect

    import tether

    params = list(inspect.signature(tether.guard).parameters)
    assert params[:2] == ["command", "cwd"]
    for command in ("ls -la", "git reset --hard", 'bash -c "rm -rf /"'):
        v = tether.guard(command, "/home/t/ws/p", home="/home/tether")
        r = _tether("guard", "--json", "--workspace", "/home/t/ws/p", "--", command)
        assert v.decision == json.loads(r.stdout)["decision"] and r.returncode == EXIT_CODES[v.decision]


EXIT_CODES = {"allow": 0, "ask": 1, "deny": 2}
