"""The hook's warm server: same answers as in-process, only for its own user's private folder, never stale."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tether.runtime.agents import client, server
from tether.runtime.agents.hook import MAX_PAYLOAD, handle
from tether.runtime.cli import hook_fast

ROOT = Path(__file__).resolve().parents[3]


def payload(command: str) -> bytes:
    return json.dumps({"session_id": "s", "cwd": "/home/p/proj", "hook_event_name": "PreToolUse",
                       "tool_name": "Bash", "tool_input": {"command": command}}).encode()


@pytest.fixture
def served(tmp_path: Path):  # type: ignore[no-untyped-def]
    home = tmp_path / "th"
    proc = subprocess.Popen([sys.executable, "-m", "tether", "hook", "serve"], cwd=ROOT,
                            env=dict(os.environ, TETHER_HOME=str(home)))
    sock = home / "hookd" / "sock"
    for _ in range(300):
        if sock.exists():
            break
        time.sleep(0.05)
    yield home
    server.stop(home)
    proc.wait(timeout=30)


def test_the_server_answers_what_the_process_would(served: Path) -> None:
    folder = client.state_dir(served)
    assert (os.stat(folder).st_mode & 0o777) == 0o700
    for command in ("ls", "git push --force", 'bash -c "rm -rf /"'):
        for agent in ("claude-code", "codex", "gemini", "cursor"):
            data = payload(command) if agent != "cursor" else json.dumps(
                {"hook_event_name": "beforeShellExecution", "command": command, "cwd": "/home/p/proj"}).encode()
            if agent == "gemini":
                data = data.replace(b"PreToolUse", b"BeforeTool").replace(b'"Bash"', b'"run_shell_command"')
            want, _ = handle(agent, data, Path("/home/p"))
            assert client.ask(agent, data, "/home/p", folder) == (want.code, want.stdout, want.stderr)
    assert client.ask("claude-code", b"not json", "/home/p", folder)[0] == 2  # type: ignore[index]
    assert client.ask("no-such-agent", payload("ls"), "/home/p", folder) is None  # refused; the server lives on
    assert client.ask("claude-code", payload("ls"), "/home/p", folder) == (0, "", "")
    assert "PreToolUse" in (served / "hook-log.jsonl").read_text()


def test_a_second_server_exits_and_stop_ends_the_first(served: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "tether", "hook", "serve"], cwd=ROOT, timeout=60,
                       env=dict(os.environ, TETHER_HOME=str(served), TETHER_HOOK_SERVER="1"), check=False)
    assert r.returncode == 1
    assert server.stop(served)
    assert client.ask("claude-code", payload("ls"), "/home/p", client.state_dir(served)) is None


def test_a_folder_others_can_enter_is_never_asked(served: Path) -> None:
    folder = client.state_dir(served)
    os.chmod(folder, 0o755)
    try:
        assert client.ask("claude-code", payload("ls"), "/home/p", folder) is None
    finally:
        os.chmod(folder, 0o700)


def test_changed_code_makes_the_server_stale(served: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = client.state_dir(served)
    assert client.ask("claude-code", payload("ls"), "/home/p", folder) is not None
    adapters = Path(server.__file__).parent / "codex.py"
    st = adapters.stat()
    os.utime(adapters, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    try:
        assert client.ask("claude-code", payload("ls"), "/home/p", folder) is None  # stale: the caller judges
        for _ in range(100):
            if not os.path.exists(os.path.join(folder, "sock")):
                break
            time.sleep(0.05)
        assert not os.path.exists(os.path.join(folder, "sock"))
    finally:
        os.utime(adapters, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_no_server_means_in_process_and_the_bounds_agree(tmp_path: Path) -> None:
    assert client.ask("claude-code", payload("ls"), "/home/p", str(tmp_path / "none")) is None
    assert hook_fast.MAX_PAYLOAD == MAX_PAYLOAD
    r = subprocess.run([sys.executable, "-m", "tether", "hook", "claude-code"], input=payload('bash -c "rm -rf /"'),
                       cwd=ROOT, capture_output=True, check=False, timeout=60,
                       env=dict(os.environ, TETHER_HOME=str(tmp_path / "th"), TETHER_HOOK_SERVER="0"))
    assert r.returncode == 2 and b"FS-001" in r.stderr
    assert not (tmp_path / "th" / "hookd").exists()  # no server started when it is off
    assert json.loads((tmp_path / "th" / "hook-log.jsonl").read_text())["decision"] == "deny"


def test_the_client_path_imports_neither_the_guardian_nor_pydantic(served: Path) -> None:
    code = ("import sys; sys.argv = ['tether', 'hook', 'claude-code']\n"
            "from tether.runtime.cli import app as cli\n"
            "try:\n    cli.main()\nexcept SystemExit as e:\n    code = e.code\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'typer', 'rich', 'typing')"
            " or m.startswith(('tether.guardian', 'tether.runtime.trust', 'tether.runtime.config')))\n"
            "sys.stderr.write(repr((code, heavy)))")
    r = subprocess.run([sys.executable, "-c", code], input=payload("ls"), capture_output=True, cwd=ROOT, timeout=60,
                       env=dict(os.environ, TETHER_HOME=str(served), TETHER_HOOK_SERVER="1"), check=False)
    assert r.stderr.decode().strip().splitlines()[-1] == "(0, [])", r.stderr
