"""Cases of a blind red-team of the hook path: a planted server, and Tether's own files swapped for a FIFO or a
device, must never turn a deny into something the agent runs."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DENY = json.dumps({"session_id": "s", "cwd": "/home/p/proj", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                   "tool_input": {"command": "rm -rf /"}})


def hook(home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tether", "hook", "claude-code"], input=DENY, capture_output=True,
                          text=True, cwd=ROOT, timeout=60, check=False,
                          env=dict(os.environ, HOME="/home/p", TETHER_HOME=str(home), **env))


def fake_server(home: Path, reply: dict) -> socket.socket:
    """A process of the person's uid answering on the hook's socket in the server's place."""
    folder = home / "hookd"
    folder.mkdir(parents=True)
    folder.chmod(0o700)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(folder / "sock"))
    sock.listen(8)

    def serve() -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            with conn:
                conn.recv(1 << 20)
                conn.sendall(json.dumps(reply).encode() + b"\n")

    threading.Thread(target=serve, daemon=True).start()
    return sock


@pytest.mark.parametrize("reply", [{"code": 0, "stdout": "", "stderr": ""}, {"code": 1, "stdout": "", "stderr": ""},
                                   {"code": 2, "stdout": "", "stderr": ""}])
def test_a_planted_server_is_not_asked_by_default(tmp_path: Path, reply: dict) -> None:
    sock = fake_server(tmp_path / "th", reply)
    try:
        done = hook(tmp_path / "th")
    finally:
        sock.close()
    assert done.returncode == 2 and done.stderr.strip(), (done.returncode, done.stderr)


@pytest.mark.parametrize("reply", [{"code": 1, "stdout": "", "stderr": ""}, {"code": 2, "stdout": "", "stderr": ""},
                                   {"code": 7, "stdout": "", "stderr": "x"}])
def test_with_the_server_on_an_answer_outside_the_contract_is_judged_in_process(tmp_path: Path, reply: dict) -> None:
    sock = fake_server(tmp_path / "th", reply)
    try:
        done = hook(tmp_path / "th", TETHER_HOOK_SERVER="1")
    finally:
        sock.close()
    assert done.returncode == 2 and done.stderr.strip(), (done.returncode, done.stderr)


@pytest.mark.parametrize("swap", ["fifo-pending", "zero-pending", "full-pending", "fifo-log", "fifo-lock"])
def test_tethers_own_files_swapped_for_a_fifo_or_device_still_block(tmp_path: Path, swap: str) -> None:
    home = tmp_path / "th"
    home.mkdir()
    kind, name = swap.split("-")
    target = home / {"pending": "hook-pending.json", "log": "hook-log.jsonl", "lock": "hook-pending.json.lock"}[name]
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to(f"/dev/{kind}")
    done = hook(home)
    assert done.returncode == 2 and done.stderr.strip(), (done.returncode, done.stderr)


def test_turning_the_server_off_is_no_config_error(tmp_path: Path) -> None:
    done = hook(tmp_path / "th", TETHER_HOOK_SERVER="0")
    assert done.returncode == 2 and "Extra inputs" not in done.stderr


@pytest.mark.parametrize("command", ["ls -la", "git push --force origin main", 'bash -c "rm -rf /"',
                                     "git checkout -- src/app.py"])
def test_the_in_process_hook_path_imports_no_heavy_module(tmp_path: Path, command: str) -> None:
    """Like `tether guard -- CMD` (tests/guardian/test_guard_cli.py): judging one call needs no typer, rich, pydantic,
    yaml or config (the trust ledger's full model loads only to record an answer or to confirm a promotion)."""
    code = ("import sys; sys.argv = ['tether', 'hook', 'claude-code']\n"
            "from tether.runtime.cli import app as cli\n"
            "try:\n    cli.main()\nexcept SystemExit as e:\n    code = e.code\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('pydantic', 'typer', 'rich', 'langgraph', 'langchain_core', 'qdrant_client', 'docker', 'yaml',"
            " 'filelock', 'platformdirs')"
            " or m.startswith(('tether.memory', 'tether.sandbox', 'tether.graphs', 'tether.gate'))"
            " or m == 'tether.runtime.config')\n"
            "print(code, heavy, file=sys.stderr)")
    payload = json.loads(DENY) | {"tool_input": {"command": command}, "tool_use_id": "toolu_1"}
    r = subprocess.run([sys.executable, "-c", code], input=json.dumps(payload), capture_output=True, text=True,
                       cwd=ROOT, check=False, timeout=60,
                       env=dict(os.environ, HOME="/home/p", TETHER_HOME=str(tmp_path / "th")))
    assert r.stderr.strip().splitlines()[-1].endswith(" []"), r.stderr
