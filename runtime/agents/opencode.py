"""OpenCode: a plugin's `tool.execute.before` hook (https://opencode.ai/docs/plugins/).

OpenCode has no command hooks: plugins are JavaScript modules loaded from
`~/.config/opencode/plugin/` or `.opencode/plugin/`, whose
`"tool.execute.before": async (input, output) => ...` sees `input.tool`
(`bash`, `write`, `edit`), `input.sessionID`, `input.callID` and
`output.args` (`command` for bash, `filePath` for write and edit), and blocks
the call by throwing an Error, whose message the model sees. `tether hook
install opencode` writes a small plugin (`PLUGIN`) that sends those fields
to `tether hook opencode` as one JSON object (`hook_event_name`, `tool`,
`sessionID`, `callID`, `args`, `directory`: the plugin context's folder,
the workspace) and throws unless the answer is exit 0 with
`{"decision": "allow"}`: no answer, a crash or a timeout blocks. A plugin
cannot ask the person from this hook, so an ask blocks, saying so, as for
Codex.
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


NAME = "opencode"
TITLE = "OpenCode"
DOCS = "https://opencode.ai/docs/plugins/"
EVENT = "tool.execute.before"
POST_EVENTS = frozenset({"tool.execute.after"})
CAN_ASK = False
MATCHER = "bash|write|edit"
WRITE_TOOLS = {"write": "filePath", "edit": "filePath", "multiedit": "filePath"}
SETTINGS = {"user": ".config/opencode/plugin/tether-guard.js", "project": ".opencode/plugin/tether-guard.js"}
TEMPLATE = ""
FILE_HOOK = True
"""The hook is a file of its own (the plugin), not an entry in a settings file."""

PLUGIN = """\
// Tether's guardian for OpenCode: every bash, write and edit call is judged by
// `tether hook opencode` first (docs/hooks.md). Written by `tether hook install opencode`;
// `tether hook uninstall opencode` removes this file.
import { spawnSync } from "node:child_process";

const COMMAND = __COMMAND__;

export const TetherGuard = async ({ directory }) => ({
  "tool.execute.before": async (input, output) => {
    const payload = JSON.stringify({
      hook_event_name: "tool.execute.before", tool: input.tool, sessionID: input.sessionID,
      callID: input.callID, args: output.args ?? {}, directory,
    });
    const r = spawnSync("/bin/sh", ["-c", COMMAND], { input: payload, encoding: "utf8", timeout: __TIMEOUT_MS__ });
    let body = null;
    try { body = JSON.parse(r.stdout || "null"); } catch { body = null; }
    if (r.status === 0 && body && body.decision === "allow") return;
    throw new Error((r.stderr || "").trim() || `Tether's hook blocked this call: no answer from ${COMMAND}`);
  },
});
"""


def plugin(command: str) -> str:
    """The plugin file that runs `command` for every tool call."""
    return PLUGIN.replace("__COMMAND__", json.dumps(command)).replace("__TIMEOUT_MS__", str(HOOK_TIMEOUT_S * 1000))


def hook_entries(command: str) -> list[tuple[str, dict[str, Any]]]:
    """The hook as (event, entry) pairs (the plugin holds it; see `plugin`)."""
    return [(EVENT, {"command": command})]


READ_ONLY = frozenset({"read", "list", "glob", "grep", "todoread", "todowrite", "websearch", "codesearch", "lsp",
                       "question", "skill"})
"""OpenCode tools that only read (or keep the to-do list); any other tool is read fail-closed (`base.tool_calls`):
`patch` and `apply_patch` (`patchText`) and `multiedit` (`filePath`) are writes, a tool with a command is shell."""


def parse(payload: dict[str, Any]) -> list[Call]:
    """The bash command (in its `workdir`) or file writes the plugin forwarded; [] for a read-only tool.

    OpenCode's bash tool takes `command`, `timeout`, `workdir`, `description` (sst/opencode
    packages/opencode/src/tool/bash.ts); apply_patch takes `patchText` (tool/apply_patch.ts).
    """
    if text(payload, "hook_event_name") != EVENT:
        msg = f"expected hook_event_name {EVENT!r}, got {payload.get('hook_event_name')!r}"
        raise PayloadError(msg)
    tool = text(payload, "tool")
    cwd = folder(text(payload, "directory"), "directory")
    session = string(payload, "sessionID")
    args = obj(payload, "args")
    if tool == "bash":
        return [Call(text(args, "command"), work_folder(args, cwd), cwd, tool, "shell", session)]
    if tool in WRITE_TOOLS:
        path = text(args, WRITE_TOOLS[tool])
        full = path if path.startswith("/") else str(cwd / path)
        return [Call(write_line(full), cwd, cwd, tool, "write", session, (full,))]
    return tool_calls(tool, args, cwd, cwd, session, READ_ONLY)


def answer(judged: Judged, calls: list[Call]) -> Answer:
    """allow: exit 0 and `{"decision": "allow"}`; ask and deny: exit 2, the reason on stderr (the thrown Error)."""
    if judged.decision == "allow":
        return Answer(0, json.dumps({"decision": "allow"}) + "\n")
    reason = message(judged, calls[0] if calls else None)
    if judged.decision == "ask":
        reason += ". OpenCode plugins cannot ask the person, so it is blocked: ask the user to run it themselves"
    return Answer(2, "", reason + "\n")


def fail(reason: str) -> Answer:
    """Any error blocks: exit 2, one line on stderr."""
    return Answer(2, "", f"Tether's hook blocked this call: {reason}\n")


def sample(command: str, cwd: str) -> dict[str, Any]:
    """What the plugin sends for a bash call (`tether hook doctor` sends it)."""
    return {"hook_event_name": EVENT, "tool": "bash", "sessionID": "tether-doctor", "callID": "tether-doctor",
            "args": {"command": command}, "directory": cwd}


def blocked(code: int, stdout: str) -> bool:
    """Whether the plugin throws on this answer (anything but exit 0 with decision allow)."""
    try:
        body = json.loads(stdout) if code == 0 and stdout.strip() else None
    except ValueError:
        return True
    return not (isinstance(body, dict) and body.get("decision") == "allow")
