"""The sandbox seam: what the rest of Tether may ask of any sandbox."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from pydantic import BaseModel


class ExecResult(BaseModel):
    """Outcome of one command; `output` is stdout and stderr interleaved."""

    command: str
    exit_code: int
    """Exit status; 124 (or 137) when the command was killed at its timeout."""
    output: str
    duration_s: float
    timed_out: bool = False
    dropped_bytes: int = 0
    """Bytes of output cut from the middle to respect the output cap."""
    secrets: list[str] = []
    """What the sandbox's stream scanner (if one is set) found in the whole output, middle included."""

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


@runtime_checkable
class Sandbox(Protocol):
    """A place to run shell commands that cannot touch the host beyond `workspace`."""

    workspace: Path

    def exec(self, command: str, *, timeout_s: float | None = None, cwd: str | None = None) -> ExecResult:
        """Run `command` with bash in the sandbox; never raises for a non-zero exit."""
        ...

    def close(self) -> None:
        """Stop and remove everything this sandbox started; safe to call twice."""
        ...
