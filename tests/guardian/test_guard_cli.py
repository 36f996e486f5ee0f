"""`tether guard`: exit codes, --json, --batch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runtime.cli import app

runner = CliRunner()


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
