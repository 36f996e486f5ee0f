"""The hook ends itself before the agent's timeout: a stuck call blocks (exit 2) instead of being timed out and run.

Agents run a call whose hook they time out (Claude Code: a non-blocking error), so `tether hook install` writes
the agent's own `timeout` field (docs: Claude Code hooks `timeout` in seconds, code.claude.com/docs/en/hooks;
Codex hooks.json `timeout` in seconds, developers.openai.com/codex/hooks; Gemini CLI `timeout` in milliseconds,
geminicli.com/docs/hooks/reference) above the hook's own deadline.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tether.runtime.agents import claude_code, codex, gemini, opencode, settings
from tether.runtime.agents.base import HOOK_TIMEOUT_S
from tether.runtime.cli import hook_fast

ROOT = Path(__file__).resolve().parents[3]


def test_the_agents_timeout_is_above_the_hooks_own_deadline() -> None:
    assert hook_fast.STDIN_DEADLINE_S < hook_fast.DEADLINE_S < HOOK_TIMEOUT_S
    assert HOOK_TIMEOUT_S - hook_fast.DEADLINE_S >= 5  # room for a slow start and the agent's own bookkeeping


@pytest.mark.parametrize(("adapter", "scale"), [(claude_code, 1), (codex, 1), (gemini, 1000)])
def test_every_installed_entry_carries_the_timeout_in_the_agents_unit(adapter, scale: int) -> None:  # type: ignore[no-untyped-def]
    for _, group in adapter.hook_entries("tether hook x"):
        for hook in group["hooks"]:
            assert hook["timeout"] == HOOK_TIMEOUT_S * scale


def test_opencode_plugin_times_the_hook_out_at_the_same_bound() -> None:
    assert f"timeout: {HOOK_TIMEOUT_S * 1000} }}" in opencode.plugin("tether hook opencode")


def test_install_writes_the_timeout_and_uninstall_removes_it_with_the_entry(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    original = ('{\n  "model": "opus",\n  "hooks": {\n'
                '    "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]\n  }\n}\n')
    path.write_text(original)
    settings.install("claude-code", path, tmp_path / "th", command="tether hook claude-code")
    data = json.loads(path.read_text())
    ours = [h for g in data["hooks"]["PreToolUse"] for h in g["hooks"]]
    assert ours == [{"type": "command", "command": "tether hook claude-code", "timeout": HOOK_TIMEOUT_S}]
    settings.uninstall("claude-code", path, tmp_path / "th")
    assert path.read_text() == original


def _payload(command: str) -> bytes:
    return json.dumps({"session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": "/home/u/proj",
                       "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command},
                       "tool_use_id": "toolu_1"}).encode()


def test_a_stuck_hook_blocks_at_its_deadline(tmp_path: Path) -> None:
    """The pending-asks lock held by another process: the hook cannot record its ask, and blocks at the deadline."""
    home = tmp_path / "th"
    home.mkdir()
    lock = os.open(home / "hook-pending.json.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    r, w = os.pipe()
    os.write(w, _payload("git push --force origin main"))
    os.close(w)
    try:
        start = time.monotonic()
        got = subprocess.run([sys.executable, "-m", "tether", "hook", "claude-code"], stdin=r, capture_output=True,
                             text=True, cwd=ROOT, timeout=60, check=False,
                             env=dict(os.environ, TETHER_HOME=str(home), TETHER_HOOK_DEADLINE_S="3"))
        took = time.monotonic() - start
    finally:
        os.close(r)
        os.close(lock)
    assert got.returncode == 2 and got.stdout == ""
    assert "did not finish within 3 s" in got.stderr
    assert 3 <= took < 30


def test_the_deadline_can_only_be_shortened(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETHER_HOOK_DEADLINE_S", "600")
    assert hook_fast.deadline_s() == hook_fast.DEADLINE_S
    monkeypatch.setenv("TETHER_HOOK_DEADLINE_S", "nonsense")
    assert hook_fast.deadline_s() == hook_fast.DEADLINE_S
    monkeypatch.setenv("TETHER_HOOK_DEADLINE_S", "0")
    assert hook_fast.deadline_s() == hook_fast.DEADLINE_S
    monkeypatch.setenv("TETHER_HOOK_DEADLINE_S", "2.5")
    assert hook_fast.deadline_s() == 2.5
