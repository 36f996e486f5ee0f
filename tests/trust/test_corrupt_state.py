"""A damaged state file in a run's folder gives one line naming it, never a traceback, and changes nothing.

Each file rollback, apply, show and report read (the snapshot's manifest,
changes.json, host_code.json, run.json, the journal) is broken four ways:
not JSON, JSON of the wrong shape, cut short, and a folder in its place.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.trust.test_apply_and_locks import shadow_run
from tests.trust.test_rollback_only_the_run import the_run
from tether.common.manifest import manifest
from tether.runtime.cli.app import app
from tether.runtime.hooks.base import RunRecord
from tether.runtime.run.settle import apply, load_host_code

FILES = ["snapshot/manifest.json", "changes.json", "host_code.json", "run.json", "journal.jsonl"]
BLOCKING = {"snapshot/manifest.json", "changes.json"}
"""Without these Tether cannot know what the run changed: rollback and apply must refuse."""
KINDS = ["garbage", "shape", "truncated", "folder"]


@pytest.fixture
def home(tmp_path, monkeypatch):
    for name in [n for n in os.environ if n.startswith("TETHER_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


@pytest.fixture
def ws(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    for name in ("a.txt", "c.txt", "d.txt", "gone.txt", "mine.txt"):
        (ws / name).write_text(f"{name} before\n")
    return ws.resolve()


def cli(home: Path, *args: str):
    result = CliRunner().invoke(app, [*args, "--home", str(home)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code != 70, result.stderr
    return result


def records(run_dir: Path, ws: Path, status: str = "success") -> None:
    """What an ended run leaves beside its snapshot and changes.json."""
    (run_dir / "run.json").write_text(json.dumps({"run_id": run_dir.name, "goal": "g", "workspace": str(ws),
                                                  "model_spec": "scripted", "status": status}))
    (run_dir / "host_code.json").write_text(json.dumps({"error": "", "files": [], "host_exec": [], "review": []}))
    (run_dir / "journal.jsonl").write_text(json.dumps({"kind": "run_start", "ts": 1.0, "run_id": run_dir.name,
                                                       "goal": "g", "model": "scripted"}) + "\n")


def damage(path: Path, kind: str) -> None:
    data = path.read_bytes()
    if kind == "folder":
        path.unlink()
        path.mkdir()
    else:
        path.write_bytes({"garbage": b"{not json\x1b[31m[red]", "shape": b'{"entries": [1, 2], "workspace": 3}',
                          "truncated": data[: len(data) // 2]}[kind])


def one_line_naming(stderr: str, name: str) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    flat = " ".join(stderr.split())
    assert lines and name.split("/")[-1] in flat, stderr
    assert "Traceback" not in stderr and "did not expect" not in stderr


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", FILES)
def test_rollback_with_a_damaged_state_file(home, ws, name, kind):
    run_dir = the_run(home, ws)
    records(run_dir, ws)
    damage(run_dir / name, kind)
    before = manifest(ws, frozenset())
    result = cli(home, "rollback", "r1")
    if name in BLOCKING:
        assert result.exit_code == 2
        one_line_naming(result.stderr, name)
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    if result.exit_code != 0:
        assert manifest(ws, frozenset()) == before, "a refused rollback changes nothing"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", FILES)
def test_apply_with_a_damaged_state_file(home, ws, name, kind):
    shadow_run(home, ws)
    run_dir = home / "runs" / "s1"
    records(run_dir, ws)
    (run_dir / "run.json").write_text(json.dumps({"run_id": "s1", "goal": "g", "workspace": str(ws),
                                                  "model_spec": "scripted", "status": "success", "shadow": True}))
    damage(run_dir / name, kind)
    before = manifest(ws, frozenset())
    result = cli(home, "apply", "s1")
    if name in BLOCKING or name in ("host_code.json", "run.json"):
        assert result.exit_code in (1, 2), result.stdout
        one_line_naming(result.stderr, name)
        assert manifest(ws, frozenset()) == before, "a refused apply changes nothing"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("verb", ["rollback", "apply"])
def test_a_damaged_applied_mark_is_never_taken_for_never_applied(home, ws, verb, kind):
    shadow_run(home, ws)
    assert cli(home, "apply", "s1").exit_code == 0
    damage(home / "runs" / "s1" / "applied.json", kind)
    before = manifest(ws, frozenset())
    result = cli(home, verb, "s1")
    assert result.exit_code == 2, result.stdout
    one_line_naming(result.stderr, "applied.json")
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert manifest(ws, frozenset()) == before


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", FILES)
def test_show_and_report_with_a_damaged_state_file(home, ws, tmp_path, name, kind):
    run_dir = the_run(home, ws)
    records(run_dir, ws)
    damage(run_dir / name, kind)
    result = cli(home, "show", "r1")
    assert result.exit_code == 0, result.stderr
    text = " ".join((result.stdout + result.stderr).split())
    if name in ("changes.json", "host_code.json"):
        assert f"{name} is unreadable" in text, text
        assert "not recorded yet" not in text
    if name == "host_code.json":
        assert "code that runs on your machine" in text, "never shown as if the run left none"
    html = tmp_path / "r.html"
    result = cli(home, "report", "r1", "--output", str(html))
    assert result.exit_code == 0, result.stderr
    if name in ("changes.json", "host_code.json"):
        assert f"{name} is unreadable" in html.read_text(), "the report says so too"
    shutil.rmtree(run_dir)


@pytest.mark.parametrize("kind", KINDS)
def test_a_run_whose_host_code_json_is_unreadable_is_never_success(tmp_path, kind):
    (tmp_path / "host_code.json").write_text(json.dumps({"error": "", "files": [], "host_exec": [], "review": []}))
    damage(tmp_path / "host_code.json", kind)
    record = RunRecord(run_id="r1", goal="g", workspace=tmp_path, run_dir=tmp_path, status="success")
    got = apply(record, load_host_code(tmp_path))
    assert got.status == "needs-review" and "host_code.json is unreadable" in got.reason
