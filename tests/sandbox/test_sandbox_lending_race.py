"""Lending a root-owned workspace to uid 1000 while a uid-1000 process races it.

The racer swaps folders of the lent workspace for symlinks to a root-only
host folder, as fast as it can, while `Handover.give()` and `take_back()`
run, for hundreds of rounds. No host file may change owner or mode, and
after each take-back nothing in the workspace may stay owned by uid 1000.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

import pytest

from tether.sandbox.workspace import sandbox_user

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to lend a workspace to uid 1000")

def _race(ws: Path, host: Path, stop: Path) -> int:
    """As uid 1000: swap a/, b/, c/ and their sub/ for symlinks to `host`, until `stop` exists."""
    swaps = 0
    while not stop.exists():
        for d in ("a", "b", "c"):
            for parent in (ws, ws / d):
                real, aside = os.path.join(parent, d if parent == ws else "sub"), None
                aside = real + ".aside"
                try:
                    os.rename(real, aside)
                except OSError:
                    continue
                try:
                    os.symlink(host, real)
                    swaps += 1
                    os.unlink(real)
                except OSError:
                    pass
                try:
                    os.rename(aside, real)
                except OSError:
                    pass
    return swaps


def _start_racer(ws: Path, host: Path, stop: Path) -> tuple[int, int]:
    """Fork the racer as uid 1000; returns its pid and the read end of its report."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            os.close(r)
            os.setgroups([])
            os.setgid(1000)
            os.setuid(1000)
            os.write(w, str(_race(ws, host, stop)).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    return pid, r


def _owners(root: Path) -> dict[str, tuple[int, int, int, bytes]]:
    """Owner, group, mode and (for files) content of everything under `root`, not following links."""
    st = root.lstat()
    out = {str(root): (st.st_uid, st.st_gid, st.st_mode, b"")}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            body = Path(path).read_bytes() if os.path.isfile(path) and not os.path.islink(path) else b""
            out[path] = (st.st_uid, st.st_gid, st.st_mode, body)
    return out


def _tree(ws: Path) -> None:
    """(Re)build the workspace, first undoing whatever the racer left half-swapped."""
    for parent in [ws, *(ws / d for d in ("a", "b", "c"))]:
        if parent.is_symlink() or not parent.is_dir():
            continue
        for entry in list(parent.iterdir()):
            if entry.is_symlink():
                entry.unlink()
        for entry in list(parent.iterdir()):
            if entry.name.endswith(".aside"):
                real = parent / entry.name.removesuffix(".aside")
                if not real.exists():
                    entry.rename(real)
    for d in ("a", "b", "c"):
        (ws / d / "sub").mkdir(parents=True, exist_ok=True)
        (ws / d / "victim").write_text("workspace file")
        (ws / d / "sub" / "victim").write_text("workspace file")
        (ws / d).chmod(0o777)  # world-writable: the racer may swap `sub` inside it during take-back too


@pytest.fixture
def open_tmp():
    """A folder uid 1000 can reach (pytest's tmp_path lies under a 0700 folder)."""
    path = Path(tempfile.mkdtemp(prefix="tether-race-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_racer_swapping_folders_for_symlinks_never_touches_a_host_file(open_tmp: Path) -> None:
    tmp_path = open_tmp
    host = tmp_path / "host"
    (host / "sub").mkdir(parents=True)
    for p in (host / "victim", host / "sub" / "victim", host / "secret"):
        p.write_text("root only")
        p.chmod(0o4755 if p.name == "secret" else 0o600)
    host.chmod(0o755)
    ws = tmp_path / "ws"
    ws.mkdir()
    ws.chmod(0o755)
    tmp_path.chmod(0o755)
    _tree(ws)
    before = _owners(host)
    stop = tmp_path / "stop"
    pid, report = _start_racer(ws, host, stop)
    try:
        for _ in range(300):
            user, handover = sandbox_user("auto", ws)
            assert handover is not None and user == "1000:1000"
            handover.give()
            time.sleep(0.001)
            handover.take_back()
            os.kill(pid, signal.SIGSTOP)  # repair what the racer left half-swapped, without it
            os.waitpid(pid, os.WUNTRACED)
            try:
                assert _owners(host) == before, "a host file changed owner, mode or content"
                _tree(ws)
            finally:
                os.kill(pid, signal.SIGCONT)
    finally:
        stop.write_text("")
        deadline = time.monotonic() + 30
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)
        out = os.read(report, 100).decode()
        os.close(report)
    assert int(out.strip() or 0) > 50, "the racer never managed to swap a folder: the test proved nothing"
    assert _owners(host) == before
    _tree(ws)
    for path in _owners(ws):  # a live racer may hide a folder from a hand-back; start this check clean
        os.chown(path, 0, 0, follow_symlinks=False)
    _, handover = sandbox_user("auto", ws)
    assert handover is not None
    handover.give()
    (ws / "a" / "made-in-sandbox").write_text("x")
    os.chown(ws / "a" / "made-in-sandbox", 1000, 1000)
    os.symlink("victim", ws / "a" / "link")
    os.chown(ws / "a" / "link", 1000, 1000, follow_symlinks=False)
    handover.take_back()
    left = {p: o for p, o in _owners(ws).items() if o[0] != 0 or o[1] != 0}
    assert not left, f"still owned by another uid after the hand-back: {left}"
