"""The inotify-kept manifest equals a full walk after any sequence of changes."""

from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import pytest

from tether.common.limits import WorkspaceLimits
from tether.common.manifest import diff, scan
from tether.common.walk import shown
from tether.runtime.workspace.live import NotifyError
from tether.runtime.workspace.watch import WorkspaceWatch

LIMITS = WorkspaceLimits()


def _mutate(ws: Path, rng: random.Random) -> None:
    """One random change of the kinds a command makes (files, folders, links, FIFOs, moves)."""
    dirs = [p for p in ws.rglob("*") if p.is_dir() and not p.is_symlink()] + [ws]
    entries = [p for p in ws.rglob("*")]
    op = rng.choice(["write", "write", "append", "mkdir", "rm", "rmtree", "mv", "mvdir", "chmod", "link", "fifo",
                     "swap", "git"])
    where = rng.choice(dirs)
    name = f"n{rng.randrange(30)}"
    target = where / name
    try:
        if op == "write":
            if target.is_fifo() or target.is_symlink():
                return  # writing would block on the FIFO or follow the link out
            target.write_text(f"v{rng.random()}")
        elif op == "append" and entries:
            f = rng.choice(entries)
            if f.is_file() and not f.is_symlink():
                with open(f, "a") as fh:
                    fh.write("more")
        elif op == "mkdir":
            if target.is_symlink():
                return
            (target / "inner").mkdir(parents=True, exist_ok=True)
            if not (target / "inner" / "f").is_fifo():
                (target / "inner" / "f").write_text("x")
        elif op == "rm" and entries:
            f = rng.choice(entries)
            if f.is_symlink() or f.is_file() or f.is_fifo():
                f.unlink()
        elif op == "rmtree" and len(dirs) > 1:
            shutil.rmtree(rng.choice(dirs[:-1]), ignore_errors=True)
        elif op in ("mv", "mvdir") and entries:
            src = rng.choice(entries)
            if op == "mvdir" and not src.is_dir():
                return
            if src.is_dir() and not src.is_symlink() and target.resolve().is_relative_to(src.resolve()):
                return
            os.rename(src, target) if not target.exists() else None
        elif op == "chmod" and entries:
            f = rng.choice(entries)
            if not f.is_symlink():
                f.chmod(rng.choice([0o600, 0o644, 0o755]))
        elif op == "link":
            os.symlink(rng.choice(["/etc", "../x", name]), target)
        elif op == "fifo":
            os.mkfifo(target)
        elif op == "swap" and len(dirs) > 1:
            d = rng.choice(dirs[:-1])
            os.rename(d, d.with_name(d.name + ".aside"))
            os.symlink("/etc", d)
        elif op == "git":
            if (ws / ".git").is_symlink() or (ws / ".git" / "objects").is_symlink():
                return
            (ws / ".git" / "objects").mkdir(parents=True, exist_ok=True)
            (ws / ".git" / "objects" / name).write_bytes(os.urandom(100))
    except (FileExistsError, FileNotFoundError, NotADirectoryError, IsADirectoryError, OSError):
        pass


@pytest.mark.parametrize("seed", range(6))
def test_live_tree_matches_a_full_walk_after_random_changes(tmp_path, seed):
    ws = tmp_path / "ws"
    ws.mkdir()
    rng = random.Random(seed)
    for _ in range(40):
        _mutate(ws, rng)
    watch = WorkspaceWatch(ws, LIMITS)
    try:
        before = watch.snapshot()
        assert watch.live is not None
        for _ in range(25):
            was = dict(before.states)
            for _ in range(rng.randrange(1, 8)):
                _mutate(ws, rng)
            after = watch.snapshot()
            want = scan(ws, LIMITS)
            assert after.states == want.states
            assert (after.apparent, after.allocated) == (want.apparent, want.allocated)
            assert watch.changed(before, after) == [shown(p) for p in diff(was, want.states).changed]
            before = after
    finally:
        watch.close()


def test_watch_falls_back_to_full_walks_when_the_queue_overflows(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    watch = WorkspaceWatch(ws, LIMITS)
    try:
        before = watch.snapshot()
        assert watch.live is not None
        max_events = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
        for i in range(max_events // 2 + 10):  # each file: create, modify, close_write
            (ws / f"f{i}").write_text("x")
        after = watch.snapshot()
        assert len(after.states) == max_events // 2 + 10
        assert len(watch.changed(before, after)) == len(after.states)
    finally:
        watch.close()


def test_no_room_for_watches_means_full_walks(tmp_path, monkeypatch):
    import tether.runtime.workspace.live as live

    def refuse(self, fd: int, rel: str) -> None:
        raise NotifyError(28, "No space left on device")

    monkeypatch.setattr(live.LiveTree, "_watch", refuse)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f").write_text("x")
    watch = WorkspaceWatch(ws, LIMITS)
    first = watch.snapshot()
    (ws / "g").write_text("y")
    assert watch.live is None and not watch.use_live
    assert watch.changed(first, watch.snapshot()) == ["g"]


def test_the_gate_change_tracker_sees_command_and_stray_changes_through_live_scans(tmp_path):
    from tether.gate.scan import ChangeTracker

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a")
    watch = WorkspaceWatch(ws, LIMITS)
    tracker = ChangeTracker(watch.changed)
    try:
        before = watch.snapshot()
        assert tracker.stray(before) == []
        (ws / "b.txt").write_text("by the command")
        after = watch.snapshot()
        assert watch.live is not None and after.states is before.states  # live views, not copies
        assert tracker.command_changes(before, after) == ["b.txt"]
        (ws / "a.txt").write_text("by a background process")  # between commands
        before = watch.snapshot()
        assert tracker.stray(before) == ["a.txt"]
        assert tracker.command_changes(before, watch.snapshot()) == []
        (ws / "late.txt").write_text("after the last command")
        assert tracker.stray(watch.final()) == ["late.txt"]  # the gate's full walk
    finally:
        watch.close()
