"""The run's sandbox while it starts in the background: `StartingSandbox`.

Why: starting the sandbox took a large share of the wait before the first
command, and the planner needs no sandbox. The start runs in a thread of its
own while the graph plans; the first use of the sandbox (a command, a
listing, the gate) waits for it. Fail closed: a start that failed raises
`SandboxNotStarted` with the start's own error at that first use, which the
runner reports exactly as a start that failed before the graph. `close()`
waits for a start under way and removes what it made, on every exit path.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from tether.sandbox.base import ExecResult, OutputScanner, Sandbox
from tether.sandbox.processes import Proc


class SandboxNotStarted(Exception):  # noqa: N818 (a signal to the runner, wrapping the real cause)
    """The sandbox did not start; `cause` is why."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


class StartingSandbox:
    """A Sandbox whose start (`start()`, then `ready(box)`) runs in a background thread.

    Args:
        workspace: The folder the sandbox works in (known before it starts).
        start: Starts the sandbox (the runner's factory).
        ready: Run in the same thread once it started (the gate's process baseline); its failure is the start's.
    """

    def __init__(self, workspace: Path, start: Callable[[], Sandbox], ready: Callable[[Sandbox], None]) -> None:
        self.workspace = workspace
        self.notices: list[str] = []
        self._future: Future[Sandbox] = Future()
        self._closed = False
        self._thread = threading.Thread(target=self._run, args=(start, ready), name="tether-sandbox-start",
                                        daemon=True)
        self._thread.start()

    def _run(self, start: Callable[[], Sandbox], ready: Callable[[Sandbox], None]) -> None:
        try:
            box = start()
        except BaseException as e:  # noqa: BLE001 - handed to the first use, which raises it
            self._future.set_exception(e)
            return
        try:
            ready(box)
        except BaseException as e:  # noqa: BLE001 - as a failed start; what it made is removed
            try:
                box.close()
            finally:
                self._future.set_exception(e)
            return
        self._future.set_result(box)

    def wait(self) -> Sandbox:
        """The started sandbox; SandboxNotStarted (with the start's error) if it did not start."""
        failed = self._future.exception()  # a Ctrl-C while waiting is the person's, raised as such
        if failed is not None:
            raise SandboxNotStarted(failed) from failed
        return self._future.result()

    @property
    def stream_scanner(self) -> Callable[[], OutputScanner] | None:
        return self.wait().stream_scanner

    def exec(self, command: str, *, timeout_s: float | None = None, cwd: str | None = None) -> ExecResult:
        return self.wait().exec(command, timeout_s=timeout_s, cwd=cwd)

    def egress(self, hosts: Iterable[str]) -> AbstractContextManager[list[Any]]:
        return self.wait().egress(hosts)

    def processes(self) -> list[Proc]:
        return self.wait().processes()

    def close(self) -> None:
        """Wait for a start under way, then remove the sandbox (nothing when it never started); safe twice."""
        self._thread.join()
        if self._closed or self._future.exception() is not None:
            return
        self._closed = True
        box = self._future.result()
        try:
            box.close()
        finally:
            self.notices.extend(box.notices)
