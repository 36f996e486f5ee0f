"""The after copy brought up from a pre-run copy (gate.after_sync) is the copy build_after makes, on real files."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tether.common.snapshot import snapshot
from tether.gate.after_sync import sync
from tether.gate.copies import build_after, build_before


def _tree(root: Path) -> dict[str, tuple]:
    """Every entry below `root`: kind, permission bits, bytes or link target (no link followed)."""
    out: dict[str, tuple] = {"": ("dir", stat.S_IMODE(os.lstat(root).st_mode))}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            st = os.lstat(path)
            rel = str(path.relative_to(root))
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode))
            elif stat.S_ISREG(st.st_mode):
                out[rel] = ("file", stat.S_IMODE(st.st_mode), path.read_bytes())
            else:
                out[rel] = ("other",)
    return out


def _write(root: Path, rel: str, data: str, mode: int = 0o644) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data)
    path.chmod(mode)


def _pre_run(ws: Path) -> None:
    _write(ws, "same.txt", "kept as it was\n")
    _write(ws, "same_size.txt", "aaaa\n")
    _write(ws, "grows.txt", "short\n")
    _write(ws, "run.sh", "echo hi\n")
    _write(ws, "gone.txt", "deleted by the run\n")
    _write(ws, "old/deep/x.txt", "a folder the run removes\n")
    _write(ws, "becomes_dir", "a file that turns into a folder\n")
    _write(ws, "dir_becomes_file/y.txt", "a folder that turns into a file\n")
    _write(ws, "file_becomes_link", "a file that turns into a link\n")
    _write(ws, ".git/HEAD", "ref: refs/heads/main\n")
    _write(ws, "modes/keep", "x\n")
    os.symlink("same.txt", ws / "link")
    os.symlink("gone.txt", ws / "relinked")


def _the_run(ws: Path) -> None:
    (ws / "same_size.txt").write_text("bbbb\n")  # same size, other bytes
    (ws / "grows.txt").write_text("a good deal longer now\n")
    (ws / "run.sh").chmod(0o755)  # only the mode
    (ws / "gone.txt").unlink()
    for p in (ws / "old/deep/x.txt", ws / "old/deep", ws / "old"):
        p.unlink() if p.is_file() else p.rmdir()
    (ws / "becomes_dir").unlink()
    _write(ws, "becomes_dir/inside.txt", "now a folder\n")
    (ws / "dir_becomes_file/y.txt").unlink()
    (ws / "dir_becomes_file").rmdir()
    (ws / "dir_becomes_file").write_text("now a file\n")
    (ws / "file_becomes_link").unlink()
    os.symlink("../outside", ws / "file_becomes_link")
    (ws / "relinked").unlink()
    os.symlink("same.txt", ws / "relinked")
    _write(ws, "new/a/b/c.txt", "added deep\n")
    _write(ws, "setuid.sh", "echo s\n", 0o4755)
    (ws / "modes").chmod(0o750)
    _write(ws, ".git/index", "binary-ish \x00 index\n")
    os.mkfifo(ws / "pipe")  # never in a gate copy


def test_sync_makes_the_copy_build_after_makes(tmp_path: Path) -> None:
    ws, run_dir = tmp_path / "ws", tmp_path / "run"
    ws.mkdir()
    _pre_run(ws)
    snapshot(ws, run_dir)
    _the_run(ws)
    folder = build_before(run_dir, ws, [], name="gate-after-warm")
    sync(folder, ws)
    want = _tree(build_after(run_dir, ws))
    assert _tree(folder) == want
    assert "pipe" not in want and want["setuid.sh"][1] == 0o755 and want["modes"][1] == 0o750


def test_sync_keeps_what_did_not_change_and_writes_the_rest(tmp_path: Path) -> None:
    ws, run_dir = tmp_path / "ws", tmp_path / "run"
    ws.mkdir()
    _pre_run(ws)
    snapshot(ws, run_dir)
    _the_run(ws)
    folder = build_before(run_dir, ws, [], name="gate-after-warm")
    held = _hold(folder, tmp_path / "held", ["same.txt", "run.sh", ".git/HEAD", "same_size.txt", "grows.txt"])
    sync(folder, ws)
    assert _kept(folder, held) == {"same.txt", "run.sh", ".git/HEAD"}  # the same bytes: kept (a mode fixed)
    assert os.access(folder / "run.sh", os.X_OK) and (folder / "same_size.txt").read_text() == "bbbb\n"


def _hold(folder: Path, aside: Path, rels: list[str]) -> dict[str, Path]:
    """A hard link to each of `rels`, outside the copy: a file kept is still the same inode as its link."""
    aside.mkdir()
    held = {rel: aside / str(i) for i, rel in enumerate(rels)}
    for rel, link in held.items():
        os.link(folder / rel, link)
    return held


def _kept(folder: Path, held: dict[str, Path]) -> set[str]:
    return {rel for rel, link in held.items() if (folder / rel).exists() and os.path.samefile(folder / rel, link)}


def test_sync_on_an_unchanged_workspace_writes_nothing(tmp_path: Path) -> None:
    ws, run_dir = tmp_path / "ws", tmp_path / "run"
    ws.mkdir()
    _pre_run(ws)
    snapshot(ws, run_dir)
    folder = build_before(run_dir, ws, [], name="gate-after-warm")
    files = [rel for rel, kind in _tree(folder).items() if kind[0] == "file"]
    held = _hold(folder, tmp_path / "held", files)
    sync(folder, ws)
    assert _kept(folder, held) == set(files)
    assert _tree(folder) == _tree(build_after(run_dir, ws))


@pytest.mark.skipif(os.geteuid() != 0, reason="entries are given to the folder's owner only when root runs the gate")
def test_what_sync_writes_goes_to_the_folders_owner(tmp_path: Path) -> None:
    ws, run_dir = tmp_path / "ws", tmp_path / "run"
    ws.mkdir()
    _pre_run(ws)
    snapshot(ws, run_dir)
    _the_run(ws)
    folder = build_before(run_dir, ws, [], name="gate-after-warm")
    os.chown(folder, 1000, 1000)  # as the sandbox's start lends it
    sync(folder, ws)
    for rel in ("new/a/b/c.txt", "new/a", "grows.txt", "becomes_dir/inside.txt", "file_becomes_link"):
        assert os.lstat(folder / rel).st_uid == 1000, rel
