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

from pathlib import Path

from tether.runtime.agents.base import (
    HOOK_TIMEOUT_S,
    Answer,
    Call,
    Judged,
    PayloadError,
    message,
    obj,
    patch_paths,
    work_folder,
    write_line,
)
from tether.runtime.agents.claude_code import tool_call

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from typing import Any


NAME = "codex"
TITLE = "Codex CLI"
DOCS = "https://developers.openai.com/codex/hooks"
EVENT = "PreToolUse"
POST_EVENTS = frozenset({"PostToolUse"})
MATCHER = "Bash|apply_patch"
CAN_ASK = False
SETTINGS = {"user": ".codex/hooks.json", "project": ".codex/hooks.json"}
TEMPLATE = "{}\n"


REQUIREMENTS = Path("/etc/codex/requirements.toml")
"""The admin-enforced requirements on Unix (developers.openai.com/codex/enterprise/managed-configuration): a
`[features] hooks = false` there turns every hook off, whatever the user's config.toml says."""


def _features_off(config: Path) -> str:
    """`features.hooks = false` (or the deprecated `codex_hooks`) in the TOML file `config`, as text ('' if not)."""
    import tomllib

    try:
        raw = config.read_bytes()[: 4 << 20]
        features = tomllib.loads(raw.decode("utf-8")).get("features")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return ""
    if isinstance(features, dict):
        for key in ("hooks", "codex_hooks"):
            if features.get(key) is False:
                return f"features.{key} = false in {config}"
    return ""


def disabled_near(settings: Path) -> str:
    """Why Codex skips the hooks.json at `settings` ('' when nothing does): `[features] hooks = false` (or the
    deprecated alias `codex_hooks = false`) in the admin's requirements.toml, or in the config.toml of the same
    layer (developers.openai.com/codex/hooks)."""
    forced = _features_off(REQUIREMENTS)
    if forced:
        return f"{forced} (the admin's requirements, which no config overrides): Codex runs no hooks at all"
    own = _features_off(settings.parent / "config.toml")
    return f"{own}: Codex runs no hooks at all" if own else ""


def hook_entries(command: str) -> list[tuple[str, dict[str, Any]]]:
    """(event, matcher group) pairs `tether hook install` adds under `hooks` of hooks.json."""
    return [(EVENT, {"matcher": MATCHER, "hooks": [{"type": "command", "command": command,
                                                     "timeout": HOOK_TIMEOUT_S}]})]
READ_ONLY = frozenset({"read_file", "list_dir", "grep_files", "view_image", "update_plan", "web_search"})
"""Codex tools that only read; any other tool is read fail-closed (`base.tool_calls`)."""


def parse(payload: dict[str, Any]) -> list[Call]:
    """The shell command (in its `workdir`), or one write per file an apply_patch touches; [] for a read-only tool.

    Codex's shell tool takes `command` (a string, or an argv list) and `workdir` (openai/codex
    codex-rs/core/src/tools/handlers/shell.rs, ShellToolCallParams).
    """
    if payload.get("tool_name") != "apply_patch":
        return tool_call(payload, EVENT, frozenset({"Bash", "shell", "local_shell", "exec_command"}), {}, READ_ONLY)
    base = tool_call(payload, EVENT, frozenset(), {}, frozenset())[0]
    tool_input = obj(payload, "tool_input")
    patch = "\n".join(v for v in tool_input.values() if isinstance(v, str))
    paths = patch_paths(patch)
    if not paths:
        msg = "apply_patch names no file (*** Add/Update/Delete File:)"
        raise PayloadError(msg)
    cwd = work_folder(tool_input, base.cwd)
    return [Call(write_line(p), cwd, base.workspace, "apply_patch", "write", base.session, (p,), base.transcript)
            for p in paths]


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
