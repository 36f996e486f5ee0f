"""What every agent adapter shares, in plain data (the hook path imports no pydantic).

Parts:
    Call: one tool call the guardian judges (a shell command, or a file write
        turned into the shell line that stands for it).
    Answer: what the hook process writes and exits with.
    PayloadError: the payload is not what the agent's protocol documents.
    Adapter: the protocol each agent module meets (module-level functions).
    text, string, folder: readers of untrusted payload fields.
    write_line: the shell line a file write is judged as (same path rules).
    work_folder, command_of: a tool input's working folder (`workdir`, `dir_path`, ...) and shell line.
    patch_paths, shell_patch: the files a patch touches (apply_patch, unified diff), also inside a shell line.
    tool_calls: a tool without a table, read fail-closed (shell, writes, or an `unknown` call that asks).
    message: the one-paragraph reason an agent shows its model (with a safe
        alternative where one is known).
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

from tether.common.errors import TetherError
from tether.common.record import dataclass, field

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from typing import Any, Literal, Protocol

    Decision = Literal["allow", "ask", "deny"]
else:
    Decision = str  # what the annotations name at run time (they are strings; nothing validates against it)
    Protocol = object  # Adapter documents the protocol; no module is checked against it at run time
MAX_REASON = 1500
HOOK_TIMEOUT_S = 30
"""The `timeout` `tether hook install` writes into each agent's hook entry (in the unit that agent's settings use),
where its schema has one. Agents run a call whose hook they time out (Claude Code, Codex and Gemini CLI treat it
as a non-blocking error), so the hook ends itself first: `runtime.cli.hook_fast.DEADLINE_S` is below this. Without
it an agent waits its own default on a stuck hook (Claude Code and Codex: 600 s, Gemini CLI: 60 s)."""



class PayloadError(TetherError, ValueError):
    """The hook payload is not what the agent's protocol documents (the hook blocks)."""


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call to judge: `command` is a shell line, `cwd` its working folder."""

    command: str
    cwd: Path
    workspace: Path
    tool: str
    kind: Literal["shell", "write", "unknown"] = "shell"
    """`unknown`: a tool Tether cannot read (no command, no path, not read-only): asked, never passed."""
    session: str = ""
    paths: tuple[str, ...] = ()
    transcript: str = ""
    """The agent's transcript file of the session, where the payload names one (an approval must match it)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """What the hook prints and its exit code."""

    code: int
    stdout: str = ""
    stderr: str = ""


@dataclass(slots=True)
class Judged:
    """The guardian's verdict on a call, as the adapters need it."""

    decision: Decision
    rules: list[str] = field(default_factory=list)
    reason: str = ""
    kinds: list[str] = field(default_factory=list)
    auto: bool = False
    """An ask the trust ledger approved (every kind promoted): the agent's explicit allow."""


class Adapter(Protocol):
    """An agent's hook protocol (an agent module; its functions, not a class)."""

    NAME: str
    TITLE: str
    DOCS: str

    def parse(self, payload: dict[str, Any]) -> Call | list[Call] | None: ...

    def answer(self, judged: Judged, calls: list[Call]) -> Answer: ...

    def fail(self, reason: str) -> Answer: ...


def text(payload: dict[str, Any], key: str) -> str:
    """A required non-empty string field of the payload."""
    value = payload.get(key)
    if not isinstance(value, str) or not value:
        msg = f"payload field {key!r} is missing or not a string"
        raise PayloadError(msg)
    return value


def string(payload: dict[str, Any], key: str) -> str:
    """An optional string field ('' when absent; another type is an error)."""
    value = payload.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        msg = f"payload field {key!r} is not a string"
        raise PayloadError(msg)
    return value


def obj(payload: dict[str, Any], key: str) -> dict[str, Any]:
    """A required object field."""
    value = payload.get(key)
    if not isinstance(value, dict):
        msg = f"payload field {key!r} is missing or not an object"
        raise PayloadError(msg)
    return value


def folder(value: str, key: str = "cwd") -> Path:
    """An absolute folder path from the payload (a relative or empty one is an error)."""
    if not value or "\x00" in value or not value.startswith("/"):
        msg = f"payload field {key!r} is not an absolute path: {value[:200]!r}"
        raise PayloadError(msg)
    return Path(value)


def write_line(path: str) -> str:
    """The shell line a file write is judged as: the guardian's redirect-target path rules apply."""
    if not path or "\x00" in path:
        msg = "the file path of the write is empty or holds a NUL byte"
        raise PayloadError(msg)
    return f"printf '' >> {shlex.quote(path)}"


def message(judged: Judged, call: Call | None = None) -> str:
    """The reason an agent shows its model: decision, rules, why, and a safer way where one is known."""
    what = "this write" if call is not None and call.kind == "write" else "this command"
    if judged.auto:
        return f"Tether's trust ledger auto-approved {what} (promoted: {', '.join(judged.kinds)}): {judged.reason}"
    head = {"deny": f"Tether's guardian blocked {what}",
            "ask": f"Tether's guardian wants the person to approve {what}",
            "allow": f"Tether's guardian allows {what}"}[judged.decision]
    out = f"{head}: {judged.reason}" if judged.reason else head
    if judged.decision == "deny":
        from tether.guardian.alternatives import ALTERNATIVES

        tips = [ALTERNATIVES[r] for r in dict.fromkeys(judged.rules) if r in ALTERNATIVES][:2]
        if tips:
            out += ". Safer: " + "; ".join(tips)
    out = " ".join(out.split())
    return out if len(out) <= MAX_REASON else out[: MAX_REASON - 3] + "..."


WORKDIR_KEYS = ("workdir", "working_directory", "cwd", "dir_path", "directory")
"""Tool-input fields that name the folder a command runs in (Codex and OpenCode `workdir`, Gemini `dir_path`,
Gemini's older `directory`)."""
COMMAND_KEYS = ("command", "cmd", "script", "commands")
PATH_KEYS = ("file_path", "filePath", "path", "notebook_path", "target_file", "filename", "dir_path", "directory")
_PATCH_PATH = re.compile(r"^\*\*\* (?:Add File|Update File|Delete File|Move to): *(.+?) *$", re.MULTILINE)
_DIFF_PATH = re.compile(r"^(?:\+\+\+|---) (?!/dev/null)(?:[ab]/)?([^\t\n]+?)(?:\t.*)? *$", re.MULTILINE)
_DIFF_TOOL = re.compile(r"(?<![\w.-])(?:patch|git\s+apply)(?![\w.-])")
_PATCH_WORD = re.compile(r"(?<![\w.-])(?:apply_patch|applypatch)(?![\w.-])")


def work_folder(args: dict[str, Any], base: Path) -> Path:
    """The folder a shell tool call runs in: its `workdir`-like field (relative to `base`), else `base`."""
    for key in WORKDIR_KEYS:
        value = args.get(key)
        if value is None or value == "":
            continue
        if not isinstance(value, str) or "\x00" in value:
            msg = f"tool input field {key!r} is not a folder path"
            raise PayloadError(msg)
        return Path(os.path.normpath(value if value.startswith("/") else os.path.join(base, value)))
    return base


def command_of(args: dict[str, Any]) -> str | None:
    """The shell line of a tool input: a `command`-like string, or an argv list quoted with shlex.join."""
    for key in COMMAND_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return shlex.join(value)
        if value not in (None, ""):
            msg = f"tool input field {key!r} is not a command string"
            raise PayloadError(msg)
    return None


def patch_paths(text: str) -> list[str]:
    """Every file a patch touches: apply_patch's Add/Update/Delete File and Move to, and unified diff headers."""
    found = [p.strip() for p in _PATCH_PATH.findall(text)]
    found += [p.strip() for p in _DIFF_PATH.findall(text)]
    return [p for p in dict.fromkeys(found) if p]


def shell_patch(command: str) -> list[str] | None:
    """The files an `apply_patch` inside a shell line touches (None when the line runs no apply_patch).

    An apply_patch whose patch is not in the line (read from a file) gives [], which the hook asks about;
    `patch` and `git apply` with a unified diff in a here-document give the diff's paths.
    """
    if _PATCH_WORD.search(command):
        return patch_paths(command)
    if "<<" in command and _DIFF_TOOL.search(command):  # `patch -p1 <<EOF`, `git apply <<EOF`: a diff in the line
        return patch_paths(command) or None
    return None


ARGV_KEYS = ("args", "argv", "arguments")
"""Fields that carry the arguments of a `command` (MCP's `{command, args}`): judged as shlex.join([command, *args])."""
PLAIN_KEYS = frozenset({"description", "timeout", "content", "contents", "text", "title", "name", "new_string",
                        "old_string", "is_background", "run_in_background", "sandbox_permissions", "justification"})
"""Fields of an unknown tool that carry no command, path or patch of their own (text a write puts in a file is
checked by the hook's content check)."""


def _commands(args: dict[str, Any]) -> list[str]:
    """Every shell line of a tool input: each command-like field, a `command` joined with its argv field."""
    out: list[str] = []
    argv = next((args[k] for k in ARGV_KEYS if k in args), None)
    for key in COMMAND_KEYS:
        line = command_of({key: args.get(key)})
        if line is None:
            continue
        if key == "command" and isinstance(args.get(key), str) and argv is not None:
            if not isinstance(argv, list) or not all(isinstance(v, str) for v in argv):
                msg = "tool input field 'args' of a command is not a list of strings"
                raise PayloadError(msg)
            line = shlex.join([line, *argv])
        out.append(line)
    return out


def tool_calls(tool: str, args: dict[str, Any], cwd: Path, workspace: Path, session: str, read_only: frozenset[str],
               transcript: str = "") -> list[Call]:
    """A tool the adapter has no table for, read fail-closed: every command-like field is judged as shell (in its
    workdir; a `command` with an `args` list as shlex.join of both), patch text in any string field and path
    fields as writes, all of them together; a field none of these reads (an object, a list) adds an `unknown`
    call, which the hook asks about, as does any other field holding text; a documented read-only tool passes ([])."""
    if tool in read_only:
        return []
    commands = _commands(args)
    where = work_folder(args, cwd) if commands else cwd
    calls = [Call(c, where, workspace, tool, "shell", session, (), transcript) for c in commands]
    texts = [v for v in args.values() if isinstance(v, str)]
    paths = [p for t in texts for p in patch_paths(t)]
    path_keys = [k for k in PATH_KEYS if not (commands and k in WORKDIR_KEYS)]
    paths += [v for k in path_keys if isinstance(v := args.get(k), str) and v]
    calls += [Call(write_line(p), cwd, workspace, tool, "write", session, (p,), transcript)
              for p in dict.fromkeys(paths)]
    read = {*COMMAND_KEYS, *WORKDIR_KEYS, *PATH_KEYS, *PLAIN_KEYS, *(ARGV_KEYS if commands else ())}
    patched = {k for k, v in args.items() if isinstance(v, str) and patch_paths(v)}
    left = sorted(k for k, v in args.items() if k not in read | patched and isinstance(v, (str, list, dict)) and v)
    if left or not calls:
        what = f"fields Tether cannot read: {', '.join(k[:40] for k in left[:5])}" if left else ""
        calls.append(Call(f"# unknown tool {tool}" + (f" ({what})" if what else ""), cwd, workspace, tool,
                          "unknown", session, ("?",) if what else (), transcript))
    return calls
