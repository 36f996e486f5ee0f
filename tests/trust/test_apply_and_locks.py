"""`tether apply` of a shadow copy, the one-run-per-workspace lock, snapshot gc of live runs, strict config."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tether.common.liveness import Holder, mark_live, process_start
from tether.common.manifest import manifest
from tether.common.snapshot import SHADOW_DIR, SNAPSHOT_DIR, gc_snapshots, snapshot
from tether.runtime.cli.app import app
from tether.runtime.config import load_config
from tether.runtime.workspace.changes import record_changes
from tether.runtime.workspace.lock import LOCKS_DIR, LockRecord, WorkspaceBusyError, WorkspaceLock, lock_key
from tether.runtime.workspace.shadow import make_shadow_copy


@pytest.fixture
def home(tmp_path, monkeypatch):
    for name in [n for n in os.environ if n.startswith("TETHER_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


def tether(home: Path, *args: str) -> tuple[int, dict | None, str]:
    result = CliRunner().invoke(app, [*args, "--json", "--home", str(home)])
    out = result.stdout.strip()
    return result.exit_code, json.loads(out) if out else None, result.stderr


def shadow_run(home: Path, ws: Path, run_id: str = "s1", status: str = "success") -> Path:
    """What a shadow run leaves: a snapshot, a copy the sandbox changed, the copy's changes recorded, run.json."""
    cfg = load_config(home, environ={})
    run_dir = cfg.runs_dir / run_id
    copy = make_shadow_copy(ws, run_dir, cfg.workspace)
    (run_dir / "run.json").write_text(json.dumps({"run_id": run_id, "goal": "g", "workspace": str(ws),
                                                  "model_spec": "scripted", "status": status, "shadow": True}))
    (copy / "a.txt").write_text("a from the shadow run\n")
    (copy / "new").mkdir()
    (copy / "new" / "n.txt").write_text("n\n")
    (copy / "gone.txt").unlink()
    os.symlink("a.txt", copy / "link")
    record_changes(run_dir, copy, cfg.workspace, run_id=run_id, workspace=ws, shadow=True)
    return copy


@pytest.fixture
def ws(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    (ws / "gone.txt").write_text("g\n")
    (ws / "mine.txt").write_text("m\n")
    return ws.resolve()


def test_apply_brings_the_copy_over_exactly_and_only_once(home, ws):
    before = manifest(ws, frozenset())
    copy = shadow_run(home, ws)
    assert manifest(ws, frozenset()) == before, "the shadow copy shares nothing with the folder"
    code, out, err = tether(home, "apply", "s1", "--dry-run")
    assert code == 0, err
    assert out["modified"] == ["a.txt"] and out["deleted"] == ["gone.txt"] and not out["done"]
    assert manifest(ws, frozenset()) == before
    (ws / "mine.txt").write_text("the person's edit, not the run's path\n")
    code, out, err = tether(home, "apply", "s1")
    assert code == 0, err
    expected = manifest(copy, frozenset())
    expected["mine.txt"] = manifest(ws, frozenset())["mine.txt"]
    assert manifest(ws, frozenset()) == expected
    assert os.readlink(ws / "link") == "a.txt"
    code, out, _ = tether(home, "apply", "s1")
    assert code == 0 and "applied already" in out["nothing"]


def test_apply_refuses_on_conflict_and_force_backs_up(home, ws):
    shadow_run(home, ws)
    (ws / "a.txt").write_text("the person changed it meanwhile\n")
    code, out, err = tether(home, "apply", "s1")
    assert code == 1 and [c["path"] for c in out["conflicts"]] == ["a.txt"]
    assert "a.txt" in out["refused"]
    assert (ws / "gone.txt").exists() and not (ws / "new").exists(), "a refused apply changed nothing"
    code, out, err = tether(home, "apply", "s1", "--force")
    assert code == 0, err
    assert (ws / "a.txt").read_text() == "a from the shadow run\n"
    assert (Path(out["backup"]) / "files" / "a.txt").read_text() == "the person changed it meanwhile\n"


def test_rollback_of_a_shadow_run_undoes_only_what_apply_brought(home, ws):
    shadow_run(home, ws)
    code, out, _ = tether(home, "rollback", "s1")
    assert code == 0 and "never applied" in out["nothing"]
    assert tether(home, "apply", "s1")[0] == 0
    (ws / "mine.txt").write_text("later work\n")
    code, out, err = tether(home, "rollback", "s1")
    assert code == 0, err
    assert (ws / "a.txt").read_text() == "a\n" and (ws / "gone.txt").read_text() == "g\n"
    assert not (ws / "new").exists() and not os.path.lexists(ws / "link")
    assert (ws / "mine.txt").read_text() == "later work\n"


def test_apply_refuses_a_plain_run(home, ws):
    snapshot(ws, home / "runs" / "r1")
    record_changes(home / "runs" / "r1", ws, load_config(home, environ={}).workspace, run_id="r1", workspace=ws)
    code, _, err = tether(home, "apply", "r1")
    assert code == 2 and "not a shadow run" in err and len(err.strip().splitlines()) == 1


def _sleeper() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def _plant_lock(home: Path, ws: Path, pid: int, start: str, run_id: str = "r-first") -> None:
    holder = Holder(run_id=run_id, pid=pid, start=start, host=os.uname().nodename, since=time.time())
    path = home / LOCKS_DIR / f"{lock_key(ws)}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(LockRecord(workspace=str(ws), holder=holder).model_dump_json())


def test_a_live_holder_keeps_the_workspace_and_a_crashed_one_does_not(home, ws):
    proc = _sleeper()
    try:
        time.sleep(0.2)
        _plant_lock(home, ws, proc.pid, process_start(proc.pid))
        with pytest.raises(WorkspaceBusyError, match="r-first"):
            WorkspaceLock(home, ws, "r-second").acquire()
        shadow_run(home, ws)
        code, _, err = tether(home, "apply", "s1")
        assert code == 2 and "r-first" in err
        assert not (ws / "new").exists()
        _plant_lock(home, ws, proc.pid, "1")  # same pid, another start time: a reused pid, not the holder
        WorkspaceLock(home, ws, "r-third").acquire().release()
    finally:
        proc.kill()
        proc.wait()
    _plant_lock(home, ws, proc.pid, process_start(os.getpid()))  # the holder is gone
    lock = WorkspaceLock(home, ws, "r-fourth").acquire()
    with pytest.raises(WorkspaceBusyError):
        other = WorkspaceLock(home, ws, "r-fifth")
        other.me = other.me.model_copy(update={"pid": 1, "start": process_start(1)})  # another live process
        other.acquire()
    lock.release()


def test_snapshot_gc_never_removes_a_live_or_paused_run(home, ws):
    runs = home / "runs"
    for i in range(4):
        snapshot(ws, runs / f"r{i}")
        os.utime(runs / f"r{i}" / SNAPSHOT_DIR, (1000 + i, 1000 + i))
    proc = _sleeper()
    try:
        time.sleep(0.2)
        mark_live(runs / "r0", Holder(run_id="r0", pid=proc.pid, start=process_start(proc.pid),
                                      host=os.uname().nodename, since=time.time()))
        mark_live(runs / "r1", Holder.me("r1").model_copy(update={"pid": 999999, "start": "1", "paused": True}))
        mark_live(runs / "r2", Holder.me("r2").model_copy(update={"pid": 999999, "start": "1"}))  # crashed
        code, out, err = tether(home, "snapshot", "gc", "--keep", "1")
        assert code == 0, err
        assert sorted(out["pruned"]) == ["r2"]
        assert {p.parent.name for p in runs.glob(f"*/{SNAPSHOT_DIR}")} == {"r0", "r1", "r3"}
        assert gc_snapshots(runs, 0) == ["r3"]
    finally:
        proc.kill()
        proc.wait()


def test_gc_also_removes_a_pruned_shadow_runs_copy(home, ws):
    shadow_run(home, ws, "s1")
    assert (home / "runs" / "s1" / SHADOW_DIR).is_dir()
    assert gc_snapshots(home / "runs", 0) == ["s1"]
    assert not (home / "runs" / "s1" / SHADOW_DIR).exists()
    code, out, err = tether(home, "apply", "s1")
    assert code == 2 and "no snapshot" in err


@pytest.mark.parametrize(("text", "needs"), [
    ("snapshot_keep = true", "needs a whole number (e.g. 20), got true (a boolean)"),
    ("snapshot_keep = 3.0", "needs a whole number (e.g. 20), got 3.0"),
    ('snapshot_keep = "3"', "needs a whole number (e.g. 20), got \"3\" (text)"),
    ("host_pass_seconds = false", "needs a number (e.g. 1.5), got false (a boolean)"),
])
def test_config_values_are_typed_strictly(home, text, needs):
    (home.parent / "tether.toml").write_text(f"[workspace]\n{text}\n")
    code, _, err = tether(home, "snapshot", "gc")
    assert code == 2
    assert err.count("\n") == 1 and "workspace." in err and needs in err, err


def test_nested_workspaces_and_other_homes_are_one_workspace(home, ws, tmp_path):
    (ws / "sub").mkdir()
    lock = WorkspaceLock(home, ws, "r-outer").acquire()
    try:
        child = subprocess.run(
            [sys.executable, "-c", "import sys; from pathlib import Path; "
             "from tether.runtime.workspace.lock import WorkspaceLock, WorkspaceBusyError\n"
             "for home, ws in ((sys.argv[1], sys.argv[2] + '/sub'), (sys.argv[3], sys.argv[2])):\n"
             "    try:\n"
             "        WorkspaceLock(Path(home), Path(ws), 'r-inner').acquire()\n"
             "        print('took', ws)\n"
             "    except WorkspaceBusyError as e:\n"
             "        print('busy:', e)\n",
             str(home), str(ws), str(tmp_path / "other-home")],
            capture_output=True, text=True, timeout=60)
        lines = child.stdout.strip().splitlines()
        assert len(lines) == 2, child.stderr
        assert lines[0].startswith("busy:") and "r-outer" in lines[0] and "holds this folder" in lines[0]
        assert lines[1].startswith("busy:") and "another home" in lines[1]
    finally:
        lock.release()
    WorkspaceLock(tmp_path / "other-home", ws, "r-after").acquire().release()


def test_apply_never_brings_a_setuid_or_setgid_bit_over(home, ws):
    cfg = load_config(home, environ={})
    run_dir = cfg.runs_dir / "s1"
    copy = make_shadow_copy(ws, run_dir, cfg.workspace)
    (copy / "tool").write_bytes(b"#!/bin/sh\nid\n")
    os.chmod(copy / "tool", 0o6755)
    os.chmod(copy / "a.txt", 0o4644)  # only the bit changed: nothing to bring over
    record_changes(run_dir, copy, cfg.workspace, run_id="s1", workspace=ws, shadow=True)
    code, out, err = tether(home, "apply", "s1")
    assert code == 1 and any(line.startswith("tool: made executable (mode 755)") for line in out["host_code"]), err
    code, out, err = tether(home, "apply", "s1", "--yes")
    assert code == 0, err
    assert out["added"] == ["tool"] and "a.txt" in out["already"]
    assert oct(os.stat(ws / "tool").st_mode & 0o7777) == oct(0o755)
    assert oct(os.stat(ws / "a.txt").st_mode & 0o7777) == oct(0o644)


def test_sandbox_exec_on_a_live_runs_workspace_is_refused(home, ws):
    proc = _sleeper()
    try:
        time.sleep(0.2)
        _plant_lock(home, ws, proc.pid, process_start(proc.pid))
        result = CliRunner().invoke(app, ["sandbox", "exec", "--workspace", str(ws), "--home", str(home), "--", "true"])
        assert result.exit_code == 2 and "r-first" in result.stderr
    finally:
        proc.kill()
        proc.wait()
