"""Cursor: the beforeShellExecution hook (https://cursor.com/docs/agent/hooks).

Payload on stdin: `hook_event_name: "beforeShellExecution"`,
`conversation_id`, `generation_id`, `workspace_roots`, `command`, `cwd`
(the command at the top level, not under `tool_input`). Answer: one JSON
object on stdout, `{"permission": "allow" | "ask" | "deny", "user_message":
..., "agent_message": ...}` (`agent_message` goes to the model,
`user_message` to the person). Errors answer deny and exit 2, which Cursor
also reads as a block. The payload's `cwd` is the workspace; when it is
empty, the first of `workspace_roots`; a `cwd` outside every root is still the
command's working folder, but the workspace is then the first root (it never
widens to `/` or the home). Cursor has no hook before a file edit
(only `afterFileEdit`), so writes by its edit tool are not judged here.
"""

from __future__ import annotations

import json
from pathlib import Path

from tether.runtime.agents.base import Answer, Call, Judged, PayloadError, folder, message, string, text

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from typing import Any


NAME = "cursor"
TITLE = "Cursor"
DOCS = "https://cursor.com/docs/agent/hooks"
EVENT = "beforeShellExecution"
POST_EVENTS = frozenset({"afterShellExecution"})
MATCHER = ""
CAN_ASK = True
SETTINGS = {"user": ".cursor/hooks.json", "project": ".cursor/hooks.json"}
TEMPLATE = '{\n  "version": 1\n}\n'


def hook_entries(command: str) -> list[tuple[str, dict[str, Any]]]:
    """(event, hook) pairs `tether hook install` adds under `hooks` of hooks.json."""
    return [(EVENT, {"command": command}), ("afterShellExecution", {"command": command})]


def parse(payload: dict[str, Any]) -> Call:
    """The shell command of a beforeShellExecution payload."""
    if text(payload, "hook_event_name") != EVENT:
        msg = f"expected hook_event_name {EVENT!r}, got {payload.get('hook_event_name')!r}"
        raise PayloadError(msg)
    cwd = string(payload, "cwd")
    roots = payload.get("workspace_roots")
    roots = [r for r in roots if isinstance(r, str) and r.startswith("/")] if isinstance(roots, list) else []
    if not cwd and roots:
        cwd = roots[0]
    where = folder(cwd)
    workspace = where
    if roots and not any(where == Path(r) or Path(r) in where.parents for r in roots):
        workspace = folder(roots[0], "workspace_roots")  # a cwd outside every root never widens the workspace
    return Call(text(payload, "command"), where, workspace, "shell", "shell", string(payload, "conversation_id"))


def _reply(permission: str, reason: str) -> str:
    body: dict[str, str] = {"permission": permission}
    if reason:
        body |= {"user_message": reason, "agent_message": reason}
    return json.dumps(body) + "\n"


def answer(judged: Judged, calls: list[Call]) -> Answer:
    """The verdict as `permission`, with the reason for the person and the model."""
    reason = "" if judged.decision == "allow" and not judged.auto else message(judged, calls[0] if calls else None)
    return Answer(0, _reply(judged.decision, reason))


def fail(reason: str) -> Answer:
    """Any error blocks: permission deny, and exit 2."""
    line = f"Tether's hook blocked this call: {reason}"
    return Answer(2, _reply("deny", line), line + "\n")


def sample(command: str, cwd: str) -> dict[str, Any]:
    """A beforeShellExecution payload (the documented shape; `tether hook doctor` sends it)."""
    return {"hook_event_name": EVENT, "conversation_id": "tether-doctor", "generation_id": "tether-doctor",
            "workspace_roots": [cwd], "command": command, "cwd": cwd}


def blocked(code: int, stdout: str) -> bool:
    """Whether Cursor reads this answer as a block (permission deny, or exit 2)."""
    if code == 2:
        return True
    try:
        body = json.loads(stdout) if stdout.strip() else {}
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("permission") == "deny"
