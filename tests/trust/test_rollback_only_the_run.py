"""Rollback undoes only what the run changed, and never loses the person's later work (issue 24, item 2).

A "run" here is what the runner leaves: a snapshot before, the folder
changed, and its changes recorded at the end (runtime.workspace.changes).
The person then works on; `tether rollback` must keep every bit of that.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tether.common.limits import WorkspaceLimits
from tether.common.snapshot import snapshot
from tether.runtime.cli.app import app
from tether.runtime.workspace.changes import record_changes


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
    (ws / "a.txt").write_text("a before\n")
    (ws / "c.txt").write_text("c before\n")
    (ws / "d.txt").write_text("d before\n")
    (ws / "src").mkdir()
    (ws / "src" / "m.py").write_text("x = 1\n")
    return ws.resolve()


def tether(home: Path, *args: str) -> tuple[int, dict | None, str]:
    result = CliRunner().invoke(app, [*args, "--json", "--home", str(home)])
    out = result.stdout.strip()
    return result.exit_code, json.loads(out) if out else None, result.stderr


def start(home: Path, ws: Path, run_id: str) -> Path:
    run_dir = home / "runs" / run_id
    snapshot(ws, run_dir)
    return run_dir


def end(run_dir: Path, ws: Path) -> None:
    record_changes(run_dir, ws, WorkspaceLimits(), run_id=run_dir.name, workspace=ws)


def the_run(home: Path, ws: Path, run_id: str = "r1") -> Path:
    run_dir = start(home, ws, run_id)
    (ws / "a.txt").write_text("a by the run\n")
    (ws / "b.txt").write_text("b made by the run\n")
    (ws / "c.txt").unlink()
    (ws / "made").mkdir()
    (ws / "made" / "x").write_text("x\n")
    end(run_dir, ws)
    return run_dir


def test_rollback_keeps_the_persons_later_edits_and_new_files(home, ws):
    the_run(home, ws)
    (ws / "d.txt").write_text("d edited by the person\n")  # a file the run never touched
    (ws / "new-by-person.txt").write_text("mine\n")
    (ws / "src" / "notes.md").write_text("mine too\n")

    code, out, err = tether(home, "rollback", "r1")
    assert code == 0, err
    assert (ws / "a.txt").read_text() == "a before\n"
    assert (ws / "c.txt").read_text() == "c before\n"
    assert not (ws / "b.txt").exists() and not (ws / "made").exists()
    assert (ws / "d.txt").read_text() == "d edited by the person\n"
    assert (ws / "new-by-person.txt").read_text() == "mine\n"
    assert (ws / "src" / "notes.md").read_text() == "mine too\n"
    run = out["runs"][0]
    assert run["reverted"] == ["a.txt"] and run["recreated"] == ["c.txt"]
    assert set(run["removed"]) == {"b.txt", "made/", "made/x"}
    backup = Path(run["backup"])
    assert (backup / "files" / "a.txt").read_text() == "a by the run\n"  # what it overwrote is kept
    assert (backup / "files" / "b.txt").read_text() == "b made by the run\n"
    assert tether(home, "rollback", "r1")[0] == 0  # a second rollback finds nothing to do
    assert (ws / "d.txt").read_text() == "d edited by the person\n"


def test_a_path_changed_since_is_a_conflict_nothing_is_done_and_force_backs_it_up(home, ws):
    the_run(home, ws)
    (ws / "a.txt").write_text("the person's fix on top of the run\n")

    code, out, err = tether(home, "rollback", "r1", "--dry-run")
    assert code == 1 and "a.txt" in err
    code, out, err = tether(home, "rollback", "r1")
    assert code == 1
    assert [c["path"] for c in out["runs"][0]["conflicts"]] == ["a.txt"]
    assert (ws / "b.txt").exists(), "a refused rollback changed nothing"
    assert (ws / "a.txt").read_text() == "the person's fix on top of the run\n"

    code, out, err = tether(home, "rollback", "r1", "--force")
    assert code == 0, err
    assert (ws / "a.txt").read_text() == "a before\n" and not (ws / "b.txt").exists()
    backup = Path(out["runs"][0]["backup"])
    assert (backup / "files" / "a.txt").read_text() == "the person's fix on top of the run\n"


def test_a_folder_the_run_made_is_kept_when_the_person_put_a_file_in_it(home, ws):
    the_run(home, ws)
    (ws / "made" / "person.txt").write_text("mine\n")
    code, out, _ = tether(home, "rollback", "r1")
    assert code == 1 and any(c["path"] == "made" for c in out["runs"][0]["conflicts"])
    code, out, err = tether(home, "rollback", "r1", "--force")
    assert code == 0, err
    assert (ws / "made" / "person.txt").read_text() == "mine\n"  # never removed, even forced
    assert not (ws / "made" / "x").exists()
    assert [k["path"] for k in out["runs"][0]["kept"]] == ["made"]


def test_a_symlink_the_person_put_where_a_folder_was_is_never_written_through(home, ws, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    run_dir = start(home, ws, "r1")
    (ws / "src" / "m.py").write_text("x = 2\n")
    (ws / "src" / "gen.py").write_text("generated\n")
    end(run_dir, ws)
    os.rename(ws / "src", tmp_path / "src.moved")
    os.symlink(outside, ws / "src")
    code, _, err = tether(home, "rollback", "r1", "--force")
    assert list(outside.iterdir()) == [], "rollback wrote through a symlink"
    assert (ws / "src").is_symlink()
    assert code in (0, 1), err


def test_an_older_run_names_the_newer_runs_and_undoes_them_in_order(home, ws):
    the_run(home, ws, "r1")
    r2 = start(home, ws, "r2")
    (ws / "a.txt").write_text("a by the second run\n")
    (ws / "made" / "y").write_text("y\n")
    end(r2, ws)
    r3 = start(home, ws, "r3")  # touches nothing r1 touched
    (ws / "other.txt").write_text("r3's work\n")
    end(r3, ws)

    code, out, err = tether(home, "rollback", "r1")
    assert code == 1 and out["newer"] == ["r2"] and "r2" in err
    assert (ws / "a.txt").read_text() == "a by the second run\n"
    code, out, err = tether(home, "rollback", "r1", "--with-newer", "--dry-run")
    assert code == 0, err
    assert [r["run_id"] for r in out["runs"]] == ["r2", "r1"]
    assert (ws / "made" / "y").exists()

    code, out, err = tether(home, "rollback", "r1", "--with-newer")
    assert code == 0, err
    assert [r["run_id"] for r in out["runs"]] == ["r2", "r1"]
    assert (ws / "a.txt").read_text() == "a before\n"
    assert not (ws / "made").exists() and not (ws / "b.txt").exists()
    assert (ws / "other.txt").read_text() == "r3's work\n", "a newer run on other paths keeps its work"
    code, out, _ = tether(home, "rollback", "r2")
    assert code == 0 and "rolled back already" in out["nothing"]


def test_the_chain_is_checked_before_anything_changes(home, ws):
    the_run(home, ws, "r1")
    r2 = start(home, ws, "r2")
    (ws / "a.txt").write_text("a by the second run\n")
    end(r2, ws)
    (ws / "b.txt").write_text("the person edited what r1 made\n")  # r1's path, changed after both
    code, out, _ = tether(home, "rollback", "r1", "--with-newer")
    assert code == 1
    assert (ws / "a.txt").read_text() == "a by the second run\n", "r2 was undone though r1 could not be"


def test_a_killed_run_without_a_record_of_its_end_needs_force(home, ws):
    start(home, ws, "r1")
    (ws / "a.txt").write_text("changed by someone\n")
    code, out, _ = tether(home, "rollback", "r1")
    assert code == 1 and "never recorded" in out["runs"][0]["conflicts"][0]["why"]
    assert tether(home, "rollback", "r1", "--force")[0] == 0
    assert (ws / "a.txt").read_text() == "a before\n"


def test_names_that_are_not_utf8_and_deep_trees_roll_back(home, ws):
    raw = os.fsencode(ws) + b"/\xff\xfe odd"
    run_dir = start(home, ws, "r1")
    with open(raw, "wb") as fh:
        fh.write(b"odd")
    fd = os.open(ws, os.O_RDONLY)
    for _ in range(300):
        os.mkdir("deep", dir_fd=fd)
        sub = os.open("deep", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = sub
    os.close(fd)
    end(run_dir, ws)
    (ws / "mine.txt").write_text("kept\n")
    code, out, err = tether(home, "rollback", "r1")
    assert code == 0, err
    assert not os.path.lexists(raw) and not (ws / "deep").exists()
    assert (ws / "mine.txt").read_text() == "kept\n"


def _deep(ws: Path, depth: int) -> None:
    """`deep/deep/...` `depth` folders down, a file at the bottom, made by descriptor (past PATH_MAX)."""
    fd = os.open(ws, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("deep", dir_fd=fd)
        sub = os.open("deep", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = sub
    out = os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
    os.write(out, b"bottom\n")
    os.close(out)
    os.close(fd)


def test_planning_a_deep_tree_opens_each_folder_about_once(home, ws, monkeypatch):
    """A run that made a tree 600 deep: planning its rollback opens a number of folders linear in the depth, not
    one walk from the root per path (600²/2 = 180k opens; a 2000-deep tree took minutes)."""
    from tether.runtime.workspace import versions

    depth = 600
    run_dir = start(home, ws, "r1")
    _deep(ws, depth)
    end(run_dir, ws)
    stranger = "/".join(["deep"] * (depth // 2)) + "/mine.txt"  # the person's file half-way down
    fd = os.open(ws, os.O_RDONLY)
    try:
        for _ in range(depth // 2):
            sub = os.open("deep", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = sub
        os.close(os.open("mine.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)
    opens = [0]
    real_open = os.open

    def counting_open(*args, **kwargs):
        opens[0] += 1
        return real_open(*args, **kwargs)

    monkeypatch.setattr(versions.os, "open", counting_open)
    code, out, err = tether(home, "rollback", "r1", "--dry-run")
    monkeypatch.setattr(versions.os, "open", real_open)
    assert opens[0] < 10 * depth, f"{opens[0]} opens to plan a {depth}-deep tree"
    # what the plan decided is what a walk per path decides: the folders holding the person's file stay, named
    conflicts = {c["path"] for c in out["runs"][0]["conflicts"]}
    assert code == 1 and stranger.rpartition("/")[0] in conflicts, err
    code, out, err = tether(home, "rollback", "r1", "--force")
    assert code == 0, err
    assert os.path.exists(os.fsencode(ws) + b"/" + "/".join(["deep"] * 10).encode())
    above = {"/".join(["deep"] * i) for i in range(1, depth // 2 + 1)}  # the folders holding the person's file
    assert {k["path"] for k in out["runs"][0]["kept"]} == above
    fd = os.open(ws, os.O_RDONLY)
    try:
        for _ in range(depth // 2):
            sub = os.open("deep", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = sub
        assert sorted(os.listdir(fd)) == ["mine.txt"]  # the run's folders below it went, the person's file stayed
    finally:
        os.close(fd)


def _git(ws: Path, *args: str) -> str:
    import subprocess

    env = {**os.environ, "GIT_AUTHOR_NAME": "p", "GIT_AUTHOR_EMAIL": "p@x", "GIT_COMMITTER_NAME": "p",
           "GIT_COMMITTER_EMAIL": "p@x", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_SYSTEM": "/dev/null"}
    return subprocess.run(["git", "-C", str(ws), *args], check=True, capture_output=True, text=True, env=env).stdout


def test_a_repository_used_since_the_run_is_one_conflict(home, ws):
    _git(ws, "init", "-q", "-b", "main")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-qm", "the person's start")
    run_dir = start(home, ws, "r1")
    (ws / "a.txt").write_text("a by the run\n")
    _git(ws, "commit", "-qam", "the run's commit")
    end(run_dir, ws)
    (ws / "d.txt").write_text("d by the person\n")
    _git(ws, "commit", "-qam", "the person's commit on top")  # its parent is an object the run made

    code, out, err = tether(home, "rollback", "r1")
    assert code == 1
    assert any(c["path"] == ".git" and "used since the run" in c["why"] for c in out["runs"][0]["conflicts"])
    assert "the person's commit on top" in _git(ws, "log", "--format=%s")
    _git(ws, "fsck", "--no-progress")  # nothing was removed: the repository is whole
    assert (ws / "a.txt").read_text() == "a by the run\n"


def test_a_repository_left_alone_since_the_run_rolls_back_with_it(home, ws):
    _git(ws, "init", "-q", "-b", "main")
    _git(ws, "add", "-A")
    _git(ws, "commit", "-qm", "the person's start")
    run_dir = start(home, ws, "r1")
    (ws / "a.txt").write_text("a by the run\n")
    _git(ws, "commit", "-qam", "the run's commit")
    end(run_dir, ws)
    (ws / "notes.txt").write_text("the person's untracked notes\n")
    code, out, err = tether(home, "rollback", "r1")
    assert code == 0, err
    assert _git(ws, "log", "--format=%s").strip() == "the person's start"
    _git(ws, "fsck", "--no-progress")
    assert (ws / "notes.txt").read_text() == "the person's untracked notes\n"
