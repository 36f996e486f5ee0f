"""Claude Code: the PreToolUse hook (https://code.claude.com/docs/en/hooks).

Payload on stdin: `session_id`, `transcript_path`, `cwd`, `permission_mode`,
`hook_event_name: "PreToolUse"`, `tool_name`, `tool_input` (`Bash`:
`command`; `Write`/`Edit`/`MultiEdit`: `file_path`; `NotebookEdit`:
`notebook_path`), `tool_use_id`. Answers: exit 0 with nothing on stdout lets
the normal permission flow go on (allow); `hookSpecificOutput` with
`permissionDecision: "ask"` and a `permissionDecisionReason` (exit 0) makes
Claude Code ask the person; exit 2 blocks the call and feeds stderr to Claude
as the reason (deny, and every error). Exit 1 would be a non-blocking error:
the call would run, so the hook never exits 1. An ask the trust ledger has
learned to approve is `permissionDecision: "allow"`; `PostToolUse` (the call
ran) teaches the ledger that the person approved an ask.
"""

from __future__ import annotations

import json
from typing import Any

from tether.runtime.agents.base import (
    Answer,
    Call,
    Judged,
    PayloadError,
    folder,
    message,
    obj,
    string,
    text,
    write_line,
)

NAME = "claude-code"
TITLE = "Claude Code"
DOCS = "https://code.claude.com/docs/en/hooks"
EVENT = "PreToolUse"
POST_EVENTS = frozenset({"PostToolUse", "PostToolUseFailure"})
SHELL_TOOLS = frozenset({"Bash"})
WRITE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
MATCHER = "Bash|Write|Edit|MultiEdit|NotebookEdit"
CAN_ASK = True
SETTINGS = {"user": ".claude/settings.json", "project": ".claude/settings.json",
            "local": ".claude/settings.local.json"}
"""Scope -> the settings file (user: under the person's home; project, local: under the project folder)."""
TEMPLATE = "{}\n"


def hook_entries(command: str) -> list[tuple[str, dict[str, Any]]]:
    """(event, matcher group) pairs `tether hook install` adds under `hooks`."""
    group = {"matcher": MATCHER, "hooks": [{"type": "command", "command": command}]}
    return [(EVENT, group), ("PostToolUse", group)]


def tool_call(payload: dict[str, Any], event: str, shell: frozenset[str], writes: dict[str, str]) -> Call | None:
    """The call in a Claude-Code-shaped payload (Codex sends the same shape); None for a tool not judged."""
    if text(payload, "hook_event_name") != event:
        msg = f"expected hook_event_name {event!r}, got {payload.get('hook_event_name')!r}"
        raise PayloadError(msg)
    tool = text(payload, "tool_name")
    cwd = folder(text(payload, "cwd"))
    session = string(payload, "session_id")
    if tool in shell:
        return Call(text(obj(payload, "tool_input"), "command"), cwd, cwd, tool, "shell", session)
    if tool in writes:
        path = text(obj(payload, "tool_input"), writes[tool])
        return Call(write_line(path), cwd, cwd, tool, "write", session, (path,))
    return None


def parse(payload: dict[str, Any]) -> Call | None:
    """The Bash command or file write of a PreToolUse payload; None for any other tool."""
    return tool_call(payload, EVENT, SHELL_TOOLS, WRITE_TOOLS)


def answer(judged: Judged, calls: list[Call]) -> Answer:
    """allow: exit 0, silent; ask: permissionDecision "ask"; deny: exit 2, the reason on stderr."""
    if judged.decision == "allow" and not judged.auto:
        return Answer(0)
    reason = message(judged, calls[0] if calls else None)
    if judged.decision in ("ask", "allow"):  # allow here: an ask the trust ledger approved
        out = {"hookSpecificOutput": {"hookEventName": EVENT, "permissionDecision": judged.decision,
                                      "permissionDecisionReason": reason}}
        return Answer(0, json.dumps(out) + "\n")
    return Answer(2, "", reason + "\n")


def fail(reason: str) -> Answer:
    """Any error blocks: exit 2, one line on stderr (Claude sees it)."""
    return Answer(2, "", f"Tether's hook blocked this call: {reason}\n")


def sample(command: str, cwd: str) -> dict[str, Any]:
    """A PreToolUse payload for a Bash command (the documented shape; `tether hook doctor` sends it)."""
    return {"session_id": "tether-doctor", "transcript_path": "", "cwd": cwd, "permission_mode": "default",
            "hook_event_name": EVENT, "tool_name": "Bash", "tool_input": {"command": command},
            "tool_use_id": "tether-doctor"}


def blocked(code: int, stdout: str) -> bool:
    """Whether Claude Code reads this answer as a block (exit 2, or a JSON deny at exit 0)."""
    return code == 2 or (code == 0 and '"permissionDecision": "deny"' in stdout)
