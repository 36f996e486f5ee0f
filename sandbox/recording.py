"""A sandbox that runs nothing: it records commands and answers at once.

Shipped, like the scripted model, so tests of the graph and runner use one
fake instead of each writing their own. It isolates nothing and must never
stand in for DockerSandbox outside tests and benchmarks.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tether.sandbox.base import ExecResult
from tether.sandbox.processes import Proc


class RecordingSandbox:
    """Implements the Sandbox protocol in memory; `fail_on` raises for one command."""

    def __init__(self, workspace: Path | None = None, *, output: str = "", fail_on: str | None = None) -> None:
        self.workspace = workspace or Path(".")
        self.output = output
        self.fail_on = fail_on
        self.commands: list[str] = []
        self.closed = False
        self.stream_scanner = None
        self.notices: list[str] = []
        self.grants: list[list[str]] = []
        """The hosts of each `egress()` grant, in order."""

    def exec(self, command: str, *, timeout_s: float | None = None, cwd: str | None = None) -> ExecResult:  # noqa: ARG002
        if command == self.fail_on:
            msg = "engine went away"
            raise RuntimeError(msg)
        self.commands.append(command)
        return ExecResult(command=command, exit_code=0, output=self.output, duration_s=0.0)

    @contextmanager
    def egress(self, hosts: Iterable[str]) -> Iterator[list[Any]]:
        """Records the grant; nothing connects here."""
        self.grants.append(list(hosts))
        yield []

    def processes(self) -> list[Proc]:
        """Nothing runs here, so nothing is left running."""
        return []

    def close(self) -> None:
        self.closed = True
