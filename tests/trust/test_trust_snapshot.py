"""Rollback restores the workspace byte for byte and demotes what the run approved."""

import json
import os
import stat

import pytest

from tether.common.manifest import manifest
from tether.common.snapshot import NoSnapshotError, SnapshotError, snapshot
from tether.runtime.config import load_config
from tether.runtime.run_ids import UnknownRunError, run_dir
from tether.runtime.trust.ledger import TrustLedger
from tether.runtime.trust.rollback import approved_kinds, rollback_run
from tether.runtime.workspace.changes import record_changes
from tether.runtime.workspace.restore import restore


def build(ws):
    (ws / "src" / "deep" / "er").mkdir(parents=True)
    (ws / "src" / "deep" / "er" / "a.py").write_text("print('a')\n")
    (ws / "src" / "b.bin").write_bytes(bytes(range(256)) * 10)
    (ws / "run.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(ws / "run.sh", 0o755)
    (ws / "secret").write_text("x")
    os.chmod(ws / "secret", 0o600)
    (ws / "empty").mkdir()
    (ws / "ro").mkdir()
    (ws / "ro" / "f").write_text("ro")
    os.chmod(ws / "ro", 0o555)
    os.symlink("src/deep/er/a.py", ws / "link")
    os.symlink("/nowhere", ws / "dangling")
    (ws / ".git").mkdir()
    (ws / ".git" / "HEAD").write_text("ref: main\n")


def vandalize(ws):
    os.chmod(ws / "ro", 0o755)
    (ws / "ro" / "f").write_text("changed in place")  # same inode: a hardlink snapshot would break
    (ws / "ro" / "new").write_text("n")
    (ws / "src" / "b.bin").unlink()
    os.chmod(ws / "run.sh", 0o644)
    (ws / "secret").write_text("y")
    os.remove(ws / "link")
    os.symlink("secret", ws / "link")
    os.remove(ws / "dangling")
    (ws / "dangling").mkdir()
    (ws / "dangling" / "x").write_text("x")
    (ws / "empty").rmdir()
    (ws / "src" / "deep").rename(ws / "moved")
    os.symlink("/etc", ws / "src" / "deep")  # a planted link restore must not write through
    (ws / "added").mkdir()
    (ws / "added" / "f.txt").write_text("new")
    (ws / ".git" / "HEAD").write_text("rewritten")


def tree(ws):
    """Manifest plus every folder's mode, since manifest() lists files and links only."""
    dirs = {os.path.relpath(d, ws): stat.S_IMODE(os.lstat(d).st_mode)
            for d, _, _ in os.walk(ws)}
    return manifest(ws, frozenset()), dirs


def test_restore_is_byte_for_byte(tmp_path):
    ws, runs = tmp_path / "ws", tmp_path / "runs"
    ws.mkdir()
    build(ws)
    before = tree(ws)
    man = snapshot(ws, runs / "r1")
    assert man.method in ("reflink", "copy")
    assert man.entries["empty"].type == "dir"
    vandalize(ws)
    assert tree(ws) != before

    result = restore(runs / "r1")
    assert tree(ws) == before
    d = result.diff
    assert "added/f.txt" in d.added and "ro/new" in d.added and "moved/" in d.added
    assert {"ro/f", "secret", "run.sh", "link", "dangling", "src/deep/", ".git/HEAD"} <= set(d.modified)
    assert {"src/b.bin", "empty/"} <= set(d.deleted)
    assert not restore(runs / "r1").diff.changed  # a second restore finds nothing to do
    os.chmod(ws / "ro", 0o755)  # let tmp_path cleanup work


def test_unreadable_file_is_restored_and_home_inside_workspace_refused(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f").write_text("x")
    snapshot(ws, tmp_path / "runs" / "r1")
    os.chmod(ws / "f", 0)
    restore(tmp_path / "runs" / "r1")
    assert (ws / "f").read_text() == "x"
    with pytest.raises(SnapshotError, match="inside the workspace"):
        snapshot(ws, ws / "home" / "runs" / "r2")


def test_unknown_and_invalid_runs(tmp_path):
    with pytest.raises(NoSnapshotError, match="no snapshot"):
        restore(tmp_path / "missing")
    with pytest.raises(UnknownRunError, match="invalid run id"):
        run_dir(tmp_path, "../escape")


def test_approved_kinds_reads_all_sources(tmp_path):
    rows = [
        {"type": "approval", "kinds": ["a:x"], "approved": True, "source": "person"},
        {"type": "approval", "kinds": ["b:x"], "approved": False},
        {"kind": "verdict", "cmd_id": "c1", "decision": "ask", "enforced": "ask", "kinds": ["c:x"]},
        {"kind": "approval", "cmd_id": "c1", "approved": True, "by": "person"},
        {"kind": "verdict", "cmd_id": "c2", "decision": "ask", "enforced": "allow", "kinds": ["d:x"]},
    ]
    (tmp_path / "journal.jsonl").write_text("\n".join(map(json.dumps, rows)) + "\n{cut")
    (tmp_path / "approvals.jsonl").write_text(json.dumps({"kind": "e:x", "approved": True}) + "\n")
    assert approved_kinds(tmp_path) == ["a:x", "c:x", "d:x", "e:x"]


def test_rollback_run_restores_and_demotes(tmp_path):
    cfg = load_config(tmp_path / "home", environ={})
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f").write_text("before")
    snapshot(ws, cfg.runs_dir / "r1")
    ledger = TrustLedger.load(cfg.ledger_path, cfg.trust, runs_dir=cfg.runs_dir)
    for _ in range(5):
        ledger.record("package-install:pip", True, run_id="r0")
    ledger.record("package-install:pip", True, run_id="r1", source="auto")
    (ws / "f").write_text("after")
    record_changes(cfg.runs_dir / "r1", ws.resolve(), cfg.workspace, run_id="r1", workspace=ws.resolve())

    result = rollback_run(cfg, "r1")
    assert (ws / "f").read_text() == "before"
    assert result.demoted == ["package-install:pip"]
    again = TrustLedger.load(cfg.ledger_path, cfg.trust)
    assert not again.is_promoted("package-install:pip")
    assert again.data.kinds["package-install:pip"].rollbacks == 1
