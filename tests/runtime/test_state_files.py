"""Broken state files and bad input end in one line naming the file and the fix (issue 12).

Each case runs the real CLI: exit 2, one `error:` line on stderr, no
traceback, nothing written where it should not be.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tether.common.events import read_events
from tether.runtime.config import load_config
from tether.runtime.run_ids import check_run_id

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "verified-success.yaml"
RUN_ID = "20260101-120000-abcdef"


@dataclass
class Result:
    returncode: int
    stderr: str


def tether(*args: str, home: Path | None, cwd: Path | None = None, env: dict[str, str] | None = None) -> Result:
    """The CLI in-process (CliRunner), with TETHER_HOME; these cases end before Docker is reached."""
    from tether.runtime.cli.app import app

    full: dict[str, str | None] = {k: None for k in os.environ if k.startswith("TETHER_")}
    if home is not None:
        full["TETHER_HOME"] = str(home)
    full |= env or {}
    old = Path.cwd()
    os.chdir(cwd or ROOT)
    try:
        r = CliRunner().invoke(app, list(args), env=full)
    finally:
        os.chdir(old)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    return Result(r.exit_code, r.stderr)


def one_line_error(p: Result | subprocess.CompletedProcess[str], *needles: str) -> str:
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr, p.stderr
    errors = [line for line in p.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, p.stderr
    for needle in needles:
        assert needle in errors[0], errors[0]
    return errors[0]


def _run_folder(home: Path, content: bytes | None) -> Path:
    folder = home / "runs" / RUN_ID
    folder.mkdir(parents=True)
    if content is not None:
        (folder / "run.json").write_bytes(content)
    return folder


@pytest.mark.parametrize("content", [b"\x00\xffgarbage{", b"", b"{}", b"[1, 2]", b'"text"', b'{"run_id": 3}'])
def test_a_broken_run_json_is_named_with_its_fix(tmp_path: Path, content: bytes) -> None:
    folder = _run_folder(tmp_path / "home", content)
    line = one_line_error(tether("resume", RUN_ID, home=tmp_path / "home"), str(folder / "run.json"), "corrupt")
    assert "remove the run folder" in line
    assert sorted(p.name for p in folder.iterdir()) == ["run.json"]  # nothing appended, no journal started


def test_a_run_folder_without_run_json_is_recognised_not_called_no_run(tmp_path: Path) -> None:
    _run_folder(tmp_path / "home", None)
    line = one_line_error(tether("resume", RUN_ID, home=tmp_path / "home"), "has no run.json", "tether run")
    assert "no run '" not in line


@pytest.mark.parametrize("run_id", ["../x", "a/b", "..", "/etc/passwd", ".hidden", "x\ny"])
def test_run_ids_with_path_parts_are_refused(tmp_path: Path, run_id: str) -> None:
    other = tmp_path / "other-home" / "runs" / "x"
    other.mkdir(parents=True)
    (other / "run.json").write_text(json.dumps({"run_id": "x"}))
    home = tmp_path / "home" / "sub"
    for command in ("resume", "approve", "deny"):
        one_line_error(tether(command, run_id, home=home), "invalid run id")
    assert sorted(p.name for p in other.iterdir()) == ["run.json"]  # no journal written into another home


def test_check_run_id_accepts_the_ids_tether_makes() -> None:
    from tether.runtime.run.runner import new_run_id

    assert check_run_id(new_run_id())


def test_approve_of_a_run_that_waits_for_nothing_refuses_without_writing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = _run_folder(
        home,
        json.dumps(
            {
                "run_id": RUN_ID,
                "goal": "g",
                "workspace": str(tmp_path),
                "model_spec": "scripted:x",
                "status": "success",
                "reason": "",
            }
        ).encode(),
    )
    (folder / "journal.jsonl").write_text('{"kind": "run_end", "key": "run_end:1", "status": "success"}\n')
    before = (folder / "journal.jsonl").read_bytes()
    for command in ("approve", "deny"):
        one_line_error(tether(command, RUN_ID, home=home), "not waiting for an approval")
    assert (folder / "journal.jsonl").read_bytes() == before


@pytest.mark.parametrize("home", ["", "/dev/null"])
def test_an_empty_or_non_folder_home_is_one_line(tmp_path: Path, home: str) -> None:
    for args in (("memory", "list"), ("run", "g", "--model", f"scripted:{EXAMPLE}", "-w", str(tmp_path))):
        one_line_error(tether(*args, home=None, cwd=tmp_path, env={"TETHER_HOME": home}), "home")
    assert list(tmp_path.iterdir()) == []  # the current folder did not become a home


def test_a_binary_tether_toml_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "tether.toml").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    one_line_error(tether("memory", "list", home=tmp_path / "home", cwd=tmp_path), "tether.toml", "not UTF-8")


def test_a_binary_scenario_file_is_one_line(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_bytes(b"\x00\x01\xff\xfe binary")
    one_line_error(
        tether("run", "--model", f"scripted:{scenario}", "-w", str(tmp_path), home=tmp_path / "home"), str(scenario)
    )


def test_a_goal_that_is_not_utf8_or_too_large_is_refused_before_a_run_folder_exists(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")} | {"TETHER_HOME": str(home)}
    p = subprocess.run(
        [
            sys.executable.encode(),
            b"-m",
            b"tether",
            b"run",
            b"fix \xff\xfe it",
            b"--model",
            f"scripted:{EXAMPLE}".encode(),
            b"-w",
            str(ws).encode(),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    one_line_error(p, "not valid UTF-8")
    one_line_error(
        tether("run", "x" * 20_000, "--model", f"scripted:{EXAMPLE}", "-w", str(ws), home=home), "run.max_goal_bytes"
    )
    assert not (home / "runs").exists() or not any((home / "runs").iterdir())


def test_a_workspace_without_write_permission_is_refused_up_front(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    ws.chmod(0o555)
    try:
        one_line_error(
            tether("run", "g", "--model", f"scripted:{EXAMPLE}", "-w", str(ws), home=tmp_path / "home"), "not writable"
        )
    finally:
        ws.chmod(0o755)


def test_garbage_journal_lines_are_counted_in_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "journal.jsonl"
    good = '{"kind": "run_end", "key": "run_end:1", "status": "success"}'
    path.write_text(f"{good}\nnot json\n{{\"kind\": \"nope\"}}\n{good.replace(':1', ':2')}\n{{\"kind\": \"run_e")
    with caplog.at_level("WARNING"):
        events = read_events(path)
    assert [e.key for e in events] == ["run_end:1", "run_end:2"]
    assert "skipped 2 unreadable line(s)" in caplog.text  # the torn last line is not counted


def test_load_config_refuses_an_empty_home_value(tmp_path: Path) -> None:
    from tether.common.errors import ConfigError

    with pytest.raises(ConfigError, match="home is empty"):
        load_config(cwd=tmp_path, environ={"TETHER_HOME": ""})
