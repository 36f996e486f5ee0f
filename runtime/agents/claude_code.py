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
DISABLE = {"disableAllHooks": True}
"""Settings that turn every hook off (`tether hook status` and `doctor` report them)."""


def hook_entries(command: str) -> list[tuple[str, dict[str, Any]]]:
    """(event, matcher group) pairs `tether hook install` adds under `hooks`."""
    group = {"matcher": MATCHER, "hooks": [{"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}]}
    return [(EVENT, group), ("PostToolUse", group)]


READ_ONLY = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead", "TodoRead", "TodoWrite", "WebSearch", "BashOutput",
                       "ExitPlanMode"})
"""Tools that only read (or keep the agent's own to-do list): they pass. Any other tool the matcher sends is read
fail-closed (`base.tool_calls`)."""


def tool_call(payload: dict[str, Any], event: str, shell: frozenset[str], writes: dict[str, str],
              read_only: frozenset[str] = READ_ONLY) -> list[Call]:
    """The calls in a Claude-Code-shaped payload (Codex sends the same shape); [] for a read-only tool."""
    if text(payload, "hook_event_name") != event:
        msg = f"expected hook_event_name {event!r}, got {payload.get('hook_event_name')!r}"
        raise PayloadError(msg)
    tool = text(payload, "tool_name")
    cwd = folder(text(payload, "cwd"))
    session = string(payload, "session_id")
    transcript = string(payload, "transcript_path")
    args = obj(payload, "tool_input")
    if tool in shell:
        return [Call(text(args, "command"), work_folder(args, cwd), cwd, tool, "shell", session, (), transcript)]
    if tool in writes:
        path = text(args, writes[tool])
        return [Call(write_line(path), cwd, cwd, tool, "write", session, (path,), transcript)]
    return tool_calls(tool, args, cwd, cwd, session, read_only, transcript)


def parse(payload: dict[str, Any]) -> list[Call]:
    """The Bash command or file write of a PreToolUse payload; [] for a read-only tool."""
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
