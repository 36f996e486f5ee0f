"""The sandbox seam: everything the rest of Tether asks of any sandbox, stated here.

A second backend implements `Sandbox` (exec, processes, close, the workspace, its notices
and the output scanner slot) and passes the same tests; nothing above this
layer looks for a method by `getattr`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel

from tether.sandbox.processes import Proc


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


class OutputScanner(Protocol):
    """Sees a command's whole output stream as it arrives (the output cap keeps only head and tail)."""

    def feed(self, data: bytes) -> None: ...

    def close(self) -> list[str]:
        """What it found (for the secrets scan: secret kinds)."""
        ...


@runtime_checkable
class Sandbox(Protocol):
    """A place to run shell commands that cannot touch the host beyond `workspace`."""

    workspace: Path
    stream_scanner: Callable[[], OutputScanner] | None
    """Made once per command and fed its whole output; its findings land in `ExecResult.secrets`."""
    notices: list[str]
    """What the person must be told about this sandbox once it is closed (e.g. a hand-back that ran late)."""

    def exec(self, command: str, *, timeout_s: float | None = None, cwd: str | None = None) -> ExecResult:
        """Run `command` with bash in the sandbox; never raises for a non-zero exit."""
        ...

    def egress(self, hosts: Iterable[str]) -> AbstractContextManager[list[Any]]:
        """Open the way out to `hosts` for the commands run inside the block; yields the connection records
        (sandbox.egress.ConnectionRecord), complete once it ends. Raises SandboxError where there is no way out."""
        ...

    def processes(self) -> list[Proc]:
        """What runs in the sandbox now, but the sandbox's own probe (the gate's R15 compares two listings)."""
        ...

    def close(self) -> None:
        """Stop and remove everything this sandbox started; safe to call twice."""
        ...
