"""Codex CLI: the PreToolUse hook (https://developers.openai.com/codex/hooks).

Codex sends Claude Code's payload shape: `session_id`, `turn_id`,
`transcript_path`, `cwd`, `hook_event_name: "PreToolUse"`, `model`,
`permission_mode`, `tool_name` (`Bash` for shell and unified exec;
`apply_patch` for file edits), `tool_input` (`command`), `tool_use_id`
(openai/codex codex-rs/hooks/src/events/pre_tool_use.rs). A PreToolUse hook
can only block: exit 2 with a reason on stderr (an empty stderr is a failed
hook, and the call runs), or `permissionDecision: "deny"`. `"ask"` is
refused as unsupported and the call then runs, so an ask blocks here, with a
reason telling the model to ask the person; exit 0 with nothing on stdout is
allow.
"""

from __future__ import annotations

import re
from typing import Any

from tether.runtime.agents.base import Answer, Call, Judged, PayloadError, message, obj, write_line
from tether.runtime.agents.claude_code import tool_call

NAME = "codex"
TITLE = "Codex CLI"
DOCS = "https://developers.openai.com/codex/hooks"
EVENT = "PreToolUse"
POST_EVENTS = frozenset({"PostToolUse"})
MATCHER = "Bash|apply_patch"
CAN_ASK = False
SETTINGS = {"user": ".codex/hooks.json", "project": ".codex/hooks.json"}
TEMPLATE = "{}\n"


def hook_entries(command: str) -> list[tuple[str, dict[str, Any]]]:
    """(event, matcher group) pairs `tether hook install` adds under `hooks` of hooks.json."""
    return [(EVENT, {"matcher": MATCHER, "hooks": [{"type": "command", "command": command}]})]
_PATCH_PATH = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$", re.MULTILINE)


def parse(payload: dict[str, Any]) -> Call | list[Call] | None:
    """The shell command, or one write per file an apply_patch touches; None for any other tool."""
    if payload.get("tool_name") != "apply_patch":
        return tool_call(payload, EVENT, frozenset({"Bash"}), {})
    base = tool_call(payload, EVENT, frozenset({"apply_patch"}), {})
    assert base is not None
    tool_input = obj(payload, "tool_input")
    patch = next((v for v in tool_input.values() if isinstance(v, str) and "*** Begin Patch" in v), None)
    if patch is None:
        msg = "apply_patch payload holds no patch text (*** Begin Patch)"
        raise PayloadError(msg)
    paths = [p.strip() for p in _PATCH_PATH.findall(patch)]
    if not paths:
        msg = "apply_patch names no file (*** Add/Update/Delete File:)"
        raise PayloadError(msg)
    return [Call(write_line(p), base.cwd, base.workspace, "apply_patch", "write", base.session, (p,)) for p in paths]


def answer(judged: Judged, calls: list[Call]) -> Answer:
    """allow: exit 0, silent; ask and deny: exit 2 with the reason on stderr (Codex cannot ask)."""
    if judged.decision == "allow":
        return Answer(0)
    reason = message(judged, calls[0] if calls else None)
    if judged.decision == "ask":
        reason += ". Codex hooks cannot ask the person, so it is blocked: ask the user to run it themselves"
    return Answer(2, "", reason + "\n")


def fail(reason: str) -> Answer:
    """Any error blocks: exit 2, one line on stderr."""
    return Answer(2, "", f"Tether's hook blocked this call: {reason}\n")


def sample(command: str, cwd: str) -> dict[str, Any]:
    """A PreToolUse payload for a shell command (the documented shape; `tether hook doctor` sends it)."""
    return {"session_id": "tether-doctor", "turn_id": "tether-doctor", "transcript_path": None, "cwd": cwd,
            "hook_event_name": EVENT, "model": "", "permission_mode": "default", "tool_name": "Bash",
            "tool_input": {"command": command}, "tool_use_id": "tether-doctor"}


def blocked(code: int, stdout: str) -> bool:
    """Whether Codex reads this answer as a block."""
    return code == 2 or (code == 0 and '"permissionDecision": "deny"' in stdout)
