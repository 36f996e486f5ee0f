"""The gate's scratch copies keep what a check can see: file modes (never setuid/setgid) and symlinks as links."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tether.common.snapshot import snapshot
from tether.gate.copies import build_after, build_before, lay


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "bin").mkdir(parents=True)
    (ws / "greet.sh").write_text('#!/bin/sh\necho "hello, $1"\n')
    os.chmod(ws / "greet.sh", 0o755)
    (ws / "secret.txt").write_text("x\n")
    os.chmod(ws / "secret.txt", 0o640)
    (ws / "bin" / "tool").write_text("#!/bin/sh\n")
    os.chmod(ws / "bin" / "tool", 0o4755)  # setuid: dropped in every copy
    os.chmod(ws / "bin", 0o750)
    (ws / "link.sh").symlink_to("greet.sh")
    return ws


def _mode(p: Path) -> int:
    return stat.S_IMODE(os.lstat(p).st_mode)


def _check(copy: Path) -> None:
    assert _mode(copy / "greet.sh") == 0o755
    assert _mode(copy / "secret.txt") == 0o640
    assert _mode(copy / "bin" / "tool") == 0o755
    assert _mode(copy / "bin") == 0o750
    assert os.path.islink(copy / "link.sh")
    assert os.readlink(copy / "link.sh") == "greet.sh"
    assert os.access(copy / "greet.sh", os.X_OK)


@pytest.mark.parametrize("side", ["before", "after"])
def test_copies_keep_modes_and_links(tmp_path: Path, side: str) -> None:
    ws = _workspace(tmp_path)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    snapshot(ws, run_dir)
    copy = build_before(run_dir, ws, []) if side == "before" else build_after(run_dir, ws)
    _check(copy)


def test_laid_file_keeps_the_workspace_mode(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    snapshot(ws, run_dir)
    (ws / "new.sh").write_text("#!/bin/sh\n")
    os.chmod(ws / "new.sh", 0o6750)
    copy = build_before(run_dir, ws, ["new.sh"])
    assert _mode(copy / "new.sh") == 0o750
    (ws / "greet.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(ws / "greet.sh", 0o700)
    lay(copy, ws, ["greet.sh"])
    assert _mode(copy / "greet.sh") == 0o700
