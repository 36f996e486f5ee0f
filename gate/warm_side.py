"""A warm side as the gate uses it (gate.warm hands it over): `HandedSide`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from tether.sandbox.base import ExecResult, OutputScanner, Sandbox
from tether.sandbox.processes import Proc


class HandedSide:
    """A warm side as the gate uses it: the sandbox itself, but `close()` hands it to `retire` (gate.warm removes it
    in the background once the gate ends)."""

    def __init__(self, box: Sandbox, retire: Callable[[Sandbox, Path], None], folder: Path,
                 start_processes: list[Proc] | None = None) -> None:
        self._box, self._retire, self._folder = box, retire, folder
        self.workspace, self.notices = box.workspace, box.notices
        self.start_processes = start_processes
        """Its processes listed right after it started, before anything ran in it (None: not listed)."""

    @property
    def stream_scanner(self) -> Callable[[], OutputScanner] | None:
        return self._box.stream_scanner

    def exec(self, command: str, *, timeout_s: float | None = None, cwd: str | None = None) -> ExecResult:
        return self._box.exec(command, timeout_s=timeout_s, cwd=cwd)

    def egress(self, hosts: Iterable[str]) -> AbstractContextManager[list[Any]]:
        return self._box.egress(hosts)

    def processes(self) -> list[Proc]:
        return self._box.processes()

    def close(self) -> None:
        self._retire(self._box, self._folder)
