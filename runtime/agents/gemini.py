"""Gemini CLI: the BeforeTool hook (https://geminicli.com/docs/hooks/reference).

Payload on stdin: `session_id`, `transcript_path`, `cwd`,
`hook_event_name: "BeforeTool"`, `timestamp`, `tool_name`, `tool_input`
(`run_shell_command`: `command`, optional `dir_path` (older: `directory`)
relative to the project; `write_file` and `replace`: `file_path`),
`mcp_context`. Answers: stdout must be one JSON object and nothing else;
`{}` (exit 0) lets the call go on; `{"decision": "ask", "reason": ...}` makes
Gemini CLI ask the person (`DefaultHookOutput.isAskDecision`,
google-gemini/gemini-cli packages/core/src/hooks/types.ts); exit 2 blocks the
tool and sends stderr to the agent as the reason (deny, and every error).
"""

from __future__ import annotations

import json

from tether.runtime.agents.base import (
    HOOK_TIMEOUT_S,
    Answer,
    Call,
    Judged,
    PayloadError,
    folder,
    message,
    obj,
    string,
    text,
    tool_calls,
    work_folder,
    write_line,
)

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from typing import Any


NAME = "gemini"
TITLE = "Gemini CLI"
DOCS = "https://geminicli.com/docs/hooks/reference"
EVENT = "BeforeTool"
POST_EVENTS = frozenset({"AfterTool"})
MATCHER = "run_shell_command|write_file|replace"
WRITE_TOOLS = {"write_file": "file_path", "replace": "file_path"}
CAN_ASK = True
SETTINGS = {"user": ".gemini/settings.json", "project": ".gemini/settings.json"}
TEMPLATE = "{}\n"


def hook_entries(command: str) -> list[tuple[str, dict[str, Any]]]:
    """(event, hook definition) pairs `tether hook install` adds under `hooks` of settings.json."""
    group = {"matcher": MATCHER, "hooks": [{"name": "tether", "type": "command", "command": command,
                                            "timeout": HOOK_TIMEOUT_S * 1000,  # Gemini CLI counts milliseconds
                                            "description": "Tether's guardian judges the call"}]}
    return [(EVENT, group), ("AfterTool", group)]


def disabled_by(data: dict[str, Any]) -> str:
    """Why Gemini CLI skips Tether's hook per this settings file ('' when nothing does): `hooksConfig.enabled`
    false turns every hook off; `hooksConfig.disabled` lists hook names (or commands) it skips."""
    config = data.get("hooksConfig")
    if not isinstance(config, dict):
        return ""
    if config.get("enabled") is False:
        return "hooksConfig.enabled = false: Gemini CLI runs no hooks at all"
    names = config.get("disabled")
    if isinstance(names, list):
        ours = [n for n in names if n == "tether" or (isinstance(n, str) and " hook gemini" in n)]
        if ours:
            return f"hooksConfig.disabled names {ours[0][:80]!r}: Gemini CLI skips Tether's hook"
    return ""


READ_ONLY = frozenset({"read_file", "read_many_files", "list_directory", "glob", "search_file_content", "grep",
                       "google_web_search", "write_todos", "ls"})
"""Gemini CLI tools that only read (or keep the to-do list); any other tool is read fail-closed (`base.tool_calls`)."""


def parse(payload: dict[str, Any]) -> list[Call]:
    """The shell command (run in `dir_path`, older `directory`, under the project) or file write; [] for a
    read-only tool."""
    if text(payload, "hook_event_name") != EVENT:
        msg = f"expected hook_event_name {EVENT!r}, got {payload.get('hook_event_name')!r}"
        raise PayloadError(msg)
    tool = text(payload, "tool_name")
    cwd = folder(text(payload, "cwd"))
    session = string(payload, "session_id")
    transcript = string(payload, "transcript_path")
    args = obj(payload, "tool_input")
    if tool == "run_shell_command":
        return [Call(text(args, "command"), work_folder(args, cwd), cwd, tool, "shell", session, (), transcript)]
    if tool in WRITE_TOOLS:
        path = text(args, WRITE_TOOLS[tool])
        full = path if path.startswith("/") else str(cwd / path)
        return [Call(write_line(full), cwd, cwd, tool, "write", session, (full,), transcript)]
    return tool_calls(tool, args, cwd, cwd, session, READ_ONLY, transcript)


def answer(judged: Judged, calls: list[Call]) -> Answer:
    """allow: `{}`; ask: decision "ask" with the reason; deny: exit 2, the reason on stderr."""
    if judged.decision == "allow" and not judged.auto:
        return Answer(0, "{}\n")
    reason = message(judged, calls[0] if calls else None)
    if judged.decision in ("ask", "allow"):  # allow here: an ask the trust ledger approved
        return Answer(0, json.dumps({"decision": judged.decision, "reason": reason}) + "\n")
    return Answer(2, "", reason + "\n")


def fail(reason: str) -> Answer:
    """Any error blocks: exit 2, one line on stderr (sent to the agent)."""
    return Answer(2, "", f"Tether's hook blocked this call: {reason}\n")


def sample(command: str, cwd: str) -> dict[str, Any]:
    """A BeforeTool payload for a shell command (the documented shape; `tether hook doctor` sends it)."""
    return {"session_id": "tether-doctor", "transcript_path": "", "cwd": cwd, "hook_event_name": EVENT,
            "timestamp": "1970-01-01T00:00:00.000Z", "tool_name": "run_shell_command",
            "tool_input": {"command": command}}


def blocked(code: int, stdout: str) -> bool:
    """Whether Gemini CLI reads this answer as a block (exit 2, or decision deny/block)."""
    if code == 2:
        return True
    try:
        body = json.loads(stdout) if code == 0 and stdout.strip() else {}
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("decision") in ("deny", "block")
