"""`tether hook AGENT`: each agent's documented payloads get the exact answer its protocol wants.

Payload shapes are copied from each agent's hook documentation:
- Claude Code: https://code.claude.com/docs/en/hooks ("PreToolUse input": session_id, transcript_path, cwd,
  permission_mode, hook_event_name, tool_name, tool_input {command, description}, tool_use_id; decision control:
  exit 2 feeds stderr to Claude, `hookSpecificOutput.permissionDecision` "ask").
- Codex CLI: https://developers.openai.com/codex/hooks and openai/codex codex-rs/hooks/src/events/pre_tool_use.rs
  (`PreToolUseCommandInput`: session_id, turn_id, transcript_path, cwd, hook_event_name, model, permission_mode,
  tool_name "Bash", tool_input {command}, tool_use_id; exit 2 with a stderr reason blocks; "ask" is unsupported).
- Gemini CLI: https://geminicli.com/docs/hooks/reference (base input: session_id, transcript_path, cwd,
  hook_event_name, timestamp; BeforeTool: tool_name, tool_input; exit 2 blocks with stderr as the reason;
  `decision` "ask" per google-gemini/gemini-cli packages/core/src/hooks/types.ts `HookDecision`).
- Cursor: https://cursor.com/docs/agent/hooks (beforeShellExecution: hook_event_name, conversation_id,
  generation_id, workspace_roots, command, cwd; answer {permission, user_message, agent_message}).
- OpenCode: https://opencode.ai/docs/plugins/ (`tool.execute.before(input, output)`: input.tool, input.sessionID,
  input.callID, output.args; throwing blocks). Tether's plugin forwards those fields; see runtime/agents/opencode.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tether.runtime.agents.hook import MAX_PAYLOAD, handle

ROOT = Path(__file__).resolve().parents[3]
HOME = Path("/home/p")
WS = "/home/p/proj"
ALLOW, ASK, DENY = "ls -la", "git push --force origin main", 'bash -c "rm -rf /"'
ASK_WHY = "Tether's guardian wants the person to approve this command: GIT-001: force push rewrites remote history"
DENY_WHY = ("Tether's guardian blocked this command: FS-001: recursive delete of a path with fewer components than "
            "the minimum write depth (/). Safer: delete a named folder inside the workspace (`rm -rf build/`), "
            "never a root, home or system path")


def claude(command: str, tool: str = "Bash", **extra: Any) -> dict[str, Any]:
    tool_input = {"command": command, "description": "run it"} if tool == "Bash" else extra
    return {"session_id": "abc123", "transcript_path": "/home/p/.claude/projects/x/abc123.jsonl", "cwd": WS,
            "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": tool,
            "tool_input": tool_input, "tool_use_id": "toolu_01ABC123"}


def codex(command: str, tool: str = "Bash") -> dict[str, Any]:
    return {"session_id": "019a-thread", "turn_id": "turn-1", "transcript_path": None, "cwd": WS,
            "hook_event_name": "PreToolUse", "model": "gpt-5", "permission_mode": "default", "tool_name": tool,
            "tool_input": {"command": command}, "tool_use_id": "call_1"}


def gemini(command: str, tool: str = "run_shell_command", **args: Any) -> dict[str, Any]:
    tool_input = {"command": command, "description": "run it", **args} if tool == "run_shell_command" else args
    return {"session_id": "s-1", "transcript_path": "/home/p/.gemini/tmp/chats/s-1.json", "cwd": WS,
            "hook_event_name": "BeforeTool", "timestamp": "2026-12-01T20:00:00.000Z", "tool_name": tool,
            "tool_input": tool_input}


def cursor(command: str, cwd: str = WS) -> dict[str, Any]:
    return {"hook_event_name": "beforeShellExecution", "conversation_id": "conv-123", "generation_id": "gen-456",
            "workspace_roots": [WS], "command": command, "cwd": cwd}


def opencode(command: str, tool: str = "bash", **args: Any) -> dict[str, Any]:
    return {"hook_event_name": "tool.execute.before", "tool": tool, "sessionID": "ses_1", "callID": "call_1",
            "args": {"command": command, "description": "run it"} if tool == "bash" else args, "directory": WS}


def ask_json(reason: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask",
                                              "permissionDecisionReason": reason}}) + "\n"


def cursor_json(permission: str, reason: str = "") -> str:
    body = {"permission": permission} | ({"user_message": reason, "agent_message": reason} if reason else {})
    return json.dumps(body) + "\n"


CODEX_ASK = ASK_WHY + ". Codex hooks cannot ask the person, so it is blocked: ask the user to run it themselves"
OPENCODE_ASK = ASK_WHY + ". OpenCode plugins cannot ask the person, so it is blocked: ask the user to run it themselves"
EXPECTED = {
    "claude-code": (claude, [(0, "", ""), (0, ask_json(ASK_WHY), ""), (2, "", DENY_WHY + "\n")]),
    "codex": (codex, [(0, "", ""), (2, "", CODEX_ASK + "\n"), (2, "", DENY_WHY + "\n")]),
    "gemini": (gemini, [(0, "{}\n", ""), (0, json.dumps({"decision": "ask", "reason": ASK_WHY}) + "\n", ""),
                        (2, "", DENY_WHY + "\n")]),
    "cursor": (cursor, [(0, cursor_json("allow"), ""), (0, cursor_json("ask", ASK_WHY), ""),
                        (0, cursor_json("deny", DENY_WHY), "")]),
    "opencode": (opencode, [(0, '{"decision": "allow"}\n', ""), (2, "", OPENCODE_ASK + "\n"),
                            (2, "", DENY_WHY + "\n")]),
}


def run(agent: str, payload: dict[str, Any] | bytes) -> tuple[int, str, str]:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    answer, _ = handle(agent, data, HOME)
    return answer.code, answer.stdout, answer.stderr


@pytest.mark.parametrize("agent", list(EXPECTED))
def test_allow_ask_deny_answers_are_exact(agent: str) -> None:
    make, expected = EXPECTED[agent]
    assert [run(agent, make(c)) for c in (ALLOW, ASK, DENY)] == expected


@pytest.mark.parametrize("agent", list(EXPECTED))
def test_the_hook_process_answers_the_same(agent: str, tmp_path: Path) -> None:
    make, expected = EXPECTED[agent]
    env = dict(os.environ, HOME=str(HOME), TETHER_HOOK_SERVER="0", TETHER_HOME=str(tmp_path / "th"))
    for command, want in zip((ALLOW, ASK, DENY), expected, strict=True):
        r = subprocess.run([sys.executable, "-m", "tether", "hook", agent], input=json.dumps(make(command)),
                           capture_output=True, text=True, cwd=ROOT, check=False, env=env)
        assert (r.returncode, r.stdout, r.stderr) == want


BAD: list[bytes] = [b"", b"not json", b"[1, 2]", b"\xff\xfe", b"{}", b'{"hook_event_name": 3}',
                    b"x" * (MAX_PAYLOAD + 1)]


@pytest.mark.parametrize("agent", list(EXPECTED))
@pytest.mark.parametrize("data", BAD, ids=lambda b: repr(b[:12]))
def test_hostile_payloads_block_with_one_line(agent: str, data: bytes) -> None:
    code, out, err = run(agent, data)
    assert code == 2
    assert len(err.splitlines()) == 1 and err.startswith("Tether's hook blocked this call: ")
    if agent == "cursor":
        assert json.loads(out)["permission"] == "deny"
    else:
        assert out == ""


@pytest.mark.parametrize(("agent", "payload"), [
    ("claude-code", claude("", tool="Bash")),
    ("claude-code", {**claude("ls"), "tool_input": {"command": ["ls"]}}),
    ("claude-code", {**claude("ls"), "cwd": "relative/dir"}),
    ("claude-code", {**claude("ls"), "hook_event_name": "UserPromptSubmit"}),
    ("codex", {**codex("ls"), "tool_input": "ls"}),
    ("gemini", {**gemini("ls"), "cwd": None}),
    ("cursor", {**cursor("ls"), "command": None}),
    ("cursor", {**cursor("ls", cwd=""), "workspace_roots": []}),
])
def test_missing_or_wrong_fields_block(agent: str, payload: dict[str, Any]) -> None:
    code, _, err = run(agent, payload)
    assert code == 2 and ("payload field" in err or "hook_event_name" in err), err


def test_other_tools_pass_and_post_events_answer_nothing() -> None:
    assert run("claude-code", claude("", tool="Read", file_path="/etc/passwd")) == (0, "", "")
    assert run("gemini", gemini("", tool="read_file", file_path="x")) == (0, "{}\n", "")
    assert run("claude-code", {**claude("rm -rf /"), "hook_event_name": "PostToolUse"}) == (0, "", "")


@pytest.mark.parametrize(("agent", "payload", "code"), [
    ("claude-code", claude("", tool="Write", file_path="/home/p/proj/src/a.py", content="x"), 0),
    ("claude-code", claude("", tool="Edit", file_path="/home/p/.bashrc", old_string="a", new_string="b"), 2),
    ("claude-code", claude("", tool="Write", file_path="/home/p/proj/.git/hooks/pre-commit", content="x"), 0),
    ("gemini", gemini("", tool="write_file", file_path="src/a.py", content="x"), 0),
    ("gemini", gemini("", tool="replace", file_path="/etc/passwd", old_string="a", new_string="b"), 2),
    ("opencode", opencode("", tool="write", filePath="src/a.py", content="x"), 0),
    ("opencode", opencode("", tool="edit", filePath="/home/p/.bashrc", oldString="a", newString="b"), 2),
])
def test_file_writes_get_the_same_path_rules(agent: str, payload: dict[str, Any], code: int) -> None:
    got, out, err = run(agent, payload)
    assert got == code
    if "pre-commit" in json.dumps(payload):
        assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "ask"
    if code == 2:
        assert err.startswith("Tether's guardian blocked this write")


def test_codex_apply_patch_judges_every_file() -> None:
    patch = ("*** Begin Patch\n*** Add File: src/new.py\n+x = 1\n*** Update File: /home/p/.ssh/config\n"
             "@@\n-a\n+ProxyCommand sh -c x\n*** End Patch\n")
    code, _, err = run("codex", codex(patch, tool="apply_patch"))
    assert code == 2 and "blocked this write" in err
    ok = "*** Begin Patch\n*** Add File: src/new.py\n+x = 1\n*** End Patch\n"
    assert run("codex", codex(ok, tool="apply_patch")) == (0, "", "")


def test_gemini_dir_path_is_the_commands_folder_and_cwd_the_workspace() -> None:
    assert run("gemini", gemini("rm -rf build", dir_path="sub"))[0] == 0
    assert run("gemini", gemini("rm -rf ../../other/build", dir_path="sub"))[1].startswith('{"decision": "ask"')


def test_the_payloads_folder_is_the_workspace() -> None:
    inside = claude("rm -rf /home/p/proj/build")
    outside = {**inside, "cwd": "/home/p/elsewhere"}
    assert run("claude-code", inside)[0] == 0
    assert json.loads(run("claude-code", outside)[1])["hookSpecificOutput"]["permissionDecision"] == "ask"


def _held_out() -> list[str]:
    lines: list[str] = []
    for f in sorted((ROOT / "bench" / "corpora").glob("adversarial_programs_holdout*.jsonl")):
        lines += [json.loads(x)["command"] for x in f.read_text().splitlines() if x.strip()]
    return lines


def test_held_out_commands_get_tether_guards_verdicts(tmp_path: Path) -> None:
    commands = _held_out()
    assert len(commands) > 50
    batch = tmp_path / "in.jsonl"
    batch.write_text("".join(json.dumps({"command": c, "cwd": WS}) + "\n" for c in commands))
    r = subprocess.run([sys.executable, "-m", "tether", "guard", "--batch", str(batch), "--workspace", WS,
                        "--user-home", str(HOME)], capture_output=True, text=True, cwd=ROOT, check=False)
    guard = [json.loads(x)["decision"] for x in r.stdout.splitlines()]
    for agent, (make, _) in EXPECTED.items():
        got = [decision_of(agent, *run(agent, make(c))[:2]) for c in commands]
        if agent in ("codex", "opencode"):  # they cannot ask: an ask blocks, and says so
            assert got == ["allow" if d == "allow" else "deny" for d in guard]
        else:
            assert got == guard, agent


def decision_of(agent: str, code: int, out: str) -> str:
    """The decision an agent reads from an answer (its protocol's terms back to allow/ask/deny)."""
    if agent == "cursor":
        return json.loads(out)["permission"]
    if code == 2:
        return "deny"
    assert code == 0
    body = json.loads(out) if out.strip() else {}
    return body.get("decision") or body.get("hookSpecificOutput", {}).get("permissionDecision") or "allow"
