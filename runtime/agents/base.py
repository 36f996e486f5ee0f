"""What every agent adapter shares, in plain data (the hook path imports no pydantic).

Parts:
    Call: one tool call the guardian judges (a shell command, or a file write
        turned into the shell line that stands for it).
    Answer: what the hook process writes and exits with.
    PayloadError: the payload is not what the agent's protocol documents.
    Adapter: the protocol each agent module meets (module-level functions).
    text, string, folder: readers of untrusted payload fields.
    write_line: the shell line a file write is judged as (same path rules).
    message: the one-paragraph reason an agent shows its model (with a safe
        alternative where one is known).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from tether.common.errors import TetherError

Decision = Literal["allow", "ask", "deny"]
MAX_REASON = 1500

ALTERNATIVES: dict[str, str] = {
    "FS-001": "delete a named folder inside the workspace instead (e.g. rm -rf ./build)",
    "FS-002": "write inside the workspace instead",
    "CONF-001": "write inside the workspace (the working folder of this session) instead",
    "GIT-001": "push with --force-with-lease, or push to a new branch",
    "GIT-002": "commit or stash the work first (git stash), then reset",
    "GIT-003": "list what would go first with git clean -n",
    "NET-001": "download to a file, read it, then run it as a separate step",
    "NET-002": "download to a file, read it, then run it as a separate step",
}
"""Rule id -> a safer way to reach the same end, told to the model with a deny."""


class PayloadError(TetherError, ValueError):
    """The hook payload is not what the agent's protocol documents (the hook blocks)."""


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call to judge: `command` is a shell line, `cwd` its working folder."""

    command: str
    cwd: Path
    workspace: Path
    tool: str
    kind: Literal["shell", "write"] = "shell"
    session: str = ""
    paths: tuple[str, ...] = ()


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
        tips = [ALTERNATIVES[r] for r in dict.fromkeys(judged.rules) if r in ALTERNATIVES]
        if tips:
            out += ". Safer: " + "; ".join(tips)
    out = " ".join(out.split())
    return out if len(out) <= MAX_REASON else out[: MAX_REASON - 3] + "..."
