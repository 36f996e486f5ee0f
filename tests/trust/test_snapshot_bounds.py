"""Snapshots of hostile workspaces: sparse files, odd names, deep trees, full disks, retention."""

from __future__ import annotations

import errno
import hashlib
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tether.common.limits import WorkspaceLimits
from tether.common.snapshot import SNAPSHOT_DIR, SnapshotError, snapshot
from tether.common.walk import open_root, read_rel, remove_entry, walk
from tether.runtime.cli.app import app
from tether.runtime.workspace.restore import restore

TIB15 = 15 << 40


def _state(root: Path) -> dict[bytes, tuple]:
    out = {}
    for e in walk(root):
        body = None
        if e.kind == "file":
            body = hashlib.sha256(read_rel(root, e.rel, 1 << 24) or b"").hexdigest(), e.st.st_size
        elif e.kind == "symlink":
            body = os.readlink(os.fsencode(e.name), dir_fd=e.parent)
        out[os.fsencode(e.rel)] = (e.kind, e.st.st_mode, body)
    return out


def _sparse(path: Path, size: int = TIB15, data_at: int = 5_000_000_000) -> None:
    with open(path, "wb") as fh:
        fh.truncate(size)
        fh.seek(data_at)
        fh.write(b"some data")


@pytest.fixture
def deep_cleanup(tmp_path):
    """Remove tmp_path's content by descriptor: pytest's recursive cleanup cannot remove 2000-deep trees."""
    yield
    fd = open_root(tmp_path)
    try:
        for name in os.listdir(fd):
            remove_entry(fd, name)
    finally:
        os.close(fd)


def test_sparse_file_odd_names_and_a_deep_tree_round_trip_cheaply(tmp_path, deep_cleanup):
    ws, runs = tmp_path / "ws", tmp_path / "runs"
    ws.mkdir()
    _sparse(ws / "big.img")
    raw = os.fsencode(ws) + b"/\xff\xfe bad"
    with open(raw, "wb") as fh:
        fh.write(b"odd")
    os.symlink(b"\xff\xfe bad", os.fsencode(ws) + b"/link\xfe")
    os.mkfifo(ws / "pipe", 0o640)
    fd = os.open(ws, os.O_RDONLY)
    for _ in range(2000):
        os.mkdir("d" * 40, dir_fd=fd)
        sub = os.open("d" * 40, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = sub
    os.close(fd)
    before = _state(ws)
    man = snapshot(ws, runs / "r1")
    assert man.bytes_copied < 1 << 20, "the holes of the sparse file were copied"
    copy = runs / "r1" / SNAPSHOT_DIR / "files" / "big.img"
    assert copy.stat().st_size == TIB15 and copy.stat().st_blocks * 512 < 1 << 20
    with open(ws / "big.img", "r+b") as fh:  # the run writes into the sparse file
        fh.seek(10_000_000_000)
        fh.write(b"more")
    os.unlink(raw)
    os.unlink(ws / "pipe")
    result = restore(runs / "r1")
    assert _state(ws) == before
    assert "big.img" in result.diff.modified and "\\xff\\xfe bad" in result.diff.deleted
    assert (ws / "big.img").stat().st_blocks * 512 < 1 << 20


def test_too_little_free_space_is_refused_before_copying(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(runs)], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip(f"cannot mount a small tmpfs here: {e}")
    try:
        ws = tmp_path / "ws"
        ws.mkdir()
        (ws / "data.bin").write_bytes(os.urandom(12 << 20))
        with pytest.raises(SnapshotError, match=r"needs 0.01 GiB .* free under") as info:
            snapshot(ws, runs / "r1")
        assert "\n" not in str(info.value)
        assert not (runs / "r1" / SNAPSHOT_DIR).exists()
    finally:
        subprocess.run(["umount", str(runs)], check=False)


def test_a_snapshot_that_fails_midway_is_removed(tmp_path, monkeypatch):
    import tether.common.snapshot as snap

    ws, runs = tmp_path / "ws", tmp_path / "runs"
    ws.mkdir()
    for i in range(3):
        (ws / f"f{i}").write_text("x" * 10)

    def disk_full(src: int, dst: int, size: int, deadline=None) -> int:
        os.write(dst, b"partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(snap, "copy_sparse", disk_full)
    monkeypatch.setattr(snap, "FICLONE", 0)  # no reflink: take the copy path
    with pytest.raises(SnapshotError, match="No space left"):
        snapshot(ws, runs / "r1")
    assert not (runs / "r1" / SNAPSHOT_DIR).exists()


def test_retention_keeps_the_newest_and_gc_prunes_on_demand(tmp_path):
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    (ws / "f").write_text("x")
    runs = home / "runs"
    for i in range(5):
        snapshot(ws, runs / f"r{i}", WorkspaceLimits(snapshot_keep=3))
        os.utime(runs / f"r{i}" / SNAPSHOT_DIR, (1000 + i, 1000 + i))
    assert sorted(p.parent.name for p in runs.glob(f"*/{SNAPSHOT_DIR}")) == ["r2", "r3", "r4"]
    assert (runs / "r0").is_dir()  # the run itself stays
    result = CliRunner().invoke(app, ["snapshot", "gc", "--keep", "1", "--json", "--home", str(home)])
    assert result.exit_code == 0, result.output
    assert sorted(p.parent.name for p in runs.glob(f"*/{SNAPSHOT_DIR}")) == ["r4"]
    result = CliRunner().invoke(app, ["rollback", "r2", "--home", str(home)])
    assert result.exit_code == 2 and "pruned by workspace.snapshot_keep" in result.output
