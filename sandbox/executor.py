"""The host half of the persistent executor: one long-lived `docker exec` per sandbox, one request per command.

Why: a `docker exec` per command costs tens of milliseconds of engine work,
while spawning bash inside a running container costs about one. The server
(sandbox/executor_server.py) runs each command in a fresh bash under
`timeout -s KILL`, with the per-exec marker in its environment, in its working
folder, stdout and stderr merged, and answers with the output, then the
request's key and the exit status. DockerSandbox keeps every other duty
(output cap, stream scan, host deadline, reaping, pids checks).

Fail closed: EOF, a malformed trailer, a relay that did not finish, or no
trailer shortly after a reaped overrun each raise ExecutorLostError; the
sandbox then reaps the command's processes, kills the server and starts a
new one for the next command.
"""

from __future__ import annotations

import secrets
import socket
import time
from typing import Any

from tether.sandbox.errors import SandboxError
from tether.sandbox.executor_server import HELLO, server_argv
from tether.sandbox.output import CHUNK, HEADER, OutputCap

HELLO_TIMEOUT_S = 15.0
SETTLE_S = 3.0
WATCH_S = 0.5
"""While a command is quiet, how often the server's own liveness is asked of the engine."""
TRAILER_MAX = 64


class ExecutorLostError(SandboxError):
    """The persistent executor died or misbehaved; the command's result is unknown."""

    started = True
    """False when the server said nothing of the command's process: it was never started (e.g. no pid to fork)."""


def _count(word: bytes) -> bool:
    """An `oom_kill` count as the server reports it: digits, or `-` where the container shows none."""
    return word.isdigit() or word == b"-"


def _held(data: bytearray, token: bytes) -> int:
    """How many bytes at the end of `data` could be the start of `token` (kept back until more arrives)."""
    for k in range(min(len(token) - 1, len(data)), 0, -1):
        if data.endswith(token[:k]):
            return k
    return 0


class Executor:
    """A connection to one server process in one container."""

    def __init__(self, api: Any, container_id: str, shell: str, has_timeout: bool) -> None:
        self._api = api
        self._pending = bytearray()
        """Stream-1 payload bytes received but not yet consumed."""
        self._raw_buf = bytearray()
        exec_id = api.exec_create(container_id, server_argv(shell, has_timeout), stdin=True, workdir="/")["Id"]
        self.exec_id = exec_id
        sock = api.exec_start(exec_id, socket=True)
        self._sock = sock
        self._raw = getattr(sock, "_sock", sock)
        response = getattr(sock, "_response", None)
        try:
            self._read1 = response.raw._fp.fp.read1  # http.client may already hold the first frames
        except AttributeError:
            self._read1 = sock.read if hasattr(sock, "read") else self._raw.recv
        self.pid = 0
        self.key: tuple[int, int] = (0, 0)
        """(pid, start ticks) of the server, as the process probe reports it."""
        self.oom_kills: int | None = None
        """The memory cgroup's `oom_kill` count the server last reported (hello or trailer); None where unknown."""
        self.oom_killed = False
        """Whether that count grew while the last finished command ran."""
        self.alive = True
        self._hello(time.monotonic() + HELLO_TIMEOUT_S)
        self._take_over(response)

    def _take_over(self, response: Any) -> None:
        """Move what http.client buffered into our own buffer, then read the socket itself.

        A timed-out read through http.client's SocketIO leaves it unusable, and this connection lives on past many.
        """
        fp = getattr(getattr(getattr(response, "raw", None), "_fp", None), "fp", None)
        if fp is not None:
            self._raw.settimeout(0)
            try:
                data = fp.peek()
            except (BlockingIOError, OSError):
                data = b""
            if data:
                self._raw_buf += fp.read1(len(data))
        self._read1 = self._raw.recv

    def _hello(self, deadline: float) -> None:
        line = self._line(deadline)
        parts = line.split() if line.startswith(HELLO) else []
        if len(parts) != 4 or not parts[1].isdigit() or not parts[2].isdigit() or not _count(parts[3]):
            self.close()
            msg = f"the sandbox's executor did not start (it said {bytes(line[:80])!r})"
            raise ExecutorLostError(msg)
        self.pid, self.key = int(parts[1]), (int(parts[1]), int(parts[2]))
        self.oom_kills = int(parts[3]) if parts[3].isdigit() else None

    def _fill(self, deadline: float) -> bool:
        """Read more of the engine's stream into `_pending` (stream 1 only); False at EOF."""
        while True:
            while len(self._raw_buf) >= HEADER.size:
                stream, length = HEADER.unpack_from(self._raw_buf)
                if len(self._raw_buf) < HEADER.size + length:
                    break
                payload = self._raw_buf[HEADER.size:HEADER.size + length]
                del self._raw_buf[:HEADER.size + length]
                if stream == 1 and payload:
                    self._pending += payload
                    return True
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            self._raw.settimeout(min(left, WATCH_S))
            try:
                chunk = self._read1(CHUNK)
            except TimeoutError:
                if time.monotonic() < deadline and not self.running():
                    return False  # the server died while what it started still holds the output
                continue
            if not chunk:
                return False
            self._raw_buf += chunk

    def _line(self, deadline: float) -> bytes:
        while b"\n" not in self._pending:
            try:
                if not self._fill(deadline) or len(self._pending) > 4096:
                    return bytes(self._pending)
            except (TimeoutError, OSError):
                return bytes(self._pending)
        line, _, rest = bytes(self._pending).partition(b"\n")
        self._pending[:] = rest
        return line

    def run(
        self, command: str, cwd: str, timeout_s: int, mark: str, cap: OutputCap, deadline: float
    ) -> tuple[int, bool]:
        """Run one command: (exit status, overran the deadline). Output goes into `cap`.

        Raises:
            ExecutorLostError: the server died or misbehaved.
        """
        if not self.alive:
            msg = "the sandbox's executor is not running"
            raise ExecutorLostError(msg)
        self._token = secrets.token_hex(16).encode()
        self._started = False
        self.oom_killed = False
        cmd, folder = command.encode(errors="surrogateescape"), cwd.encode(errors="surrogateescape")
        header = b"%s %d %d %d %s\n" % (self._token, timeout_s, len(folder), len(cmd), mark.encode())
        try:
            self._raw.sendall(header + folder + cmd)
        except OSError as e:
            self.close()
            msg = f"the sandbox's executor stopped taking commands ({e})"
            lost = ExecutorLostError(msg)
            lost.started = False
            raise lost from e
        try:
            code = self._output(cap, deadline)
        except TimeoutError:
            return 137, True
        return code, False

    def _output(self, cap: OutputCap, deadline: float) -> int:
        try:
            return self._read_output(cap, deadline)
        except ExecutorLostError as e:
            e.started = self._started
            raise

    def _read_output(self, cap: OutputCap, deadline: float) -> int:
        token, n = self._token, len(self._token)
        while True:
            at = self._pending.find(token)
            if at > 0:
                cap.add(bytes(self._pending[:at]))
                del self._pending[:at]
            if at >= 0 and len(self._pending) > n + (self._pending[n:n + 1] == b"+"):
                if self._pending[n:n + 2] == b"+\n" and not self._started:  # the command's process exists
                    self._started = True
                    del self._pending[:n + 2]
                    continue
                if self._pending[n:n + 1] != b" ":
                    self.close()
                    msg = f"the sandbox's executor sent a malformed frame ({bytes(self._pending[n:n + 8])!r})"
                    raise ExecutorLostError(msg)
                del self._pending[:n + 1]
                return self._trailer(deadline)
            if at < 0:
                hold = _held(self._pending, token)
                if len(self._pending) > hold:
                    cap.add(bytes(self._pending[:len(self._pending) - hold]))
                    del self._pending[:len(self._pending) - hold]
            try:
                more = self._fill(deadline)
            except TimeoutError:
                raise
            except OSError as e:
                self.close()
                msg = f"the sandbox's executor connection broke ({e})"
                raise ExecutorLostError(msg) from e
            if not more:
                cap.add(bytes(self._pending))
                self._pending.clear()
                self.close()
                msg = "the sandbox's executor died while the command ran"
                raise ExecutorLostError(msg)

    def _trailer(self, deadline: float) -> int:
        line = self._line(max(deadline, time.monotonic() + SETTLE_S))
        parts = line.split()
        well_formed = len(parts) == 3 and parts[0].isdigit() and parts[1].isdigit() and _count(parts[2])
        if not well_formed or len(line) > TRAILER_MAX:
            self.close()
            msg = f"the sandbox's executor sent a malformed result ({bytes(line[:40])!r})"
            raise ExecutorLostError(msg)
        status, relay = int(parts[0]), int(parts[1])
        kills = int(parts[2]) if parts[2].isdigit() else None
        self.oom_killed = kills is not None and self.oom_kills is not None and kills > self.oom_kills
        self.oom_kills = kills
        if relay != 0:
            self.close()
            msg = f"the sandbox's executor lost the command's output (relay exit {relay})"
            raise ExecutorLostError(msg)
        return status

    def settle(self) -> None:
        """After an overrun whose processes were reaped: read to the request's trailer, or give up on the server.

        Raises:
            ExecutorLostError: no trailer within SETTLE_S.
        """
        sink = OutputCap(2)
        try:
            self._output(sink, time.monotonic() + SETTLE_S)
        except TimeoutError:
            self.close()
            msg = "the sandbox's executor did not finish a reaped command"
            raise ExecutorLostError(msg) from None

    def running(self) -> bool:
        """Whether the engine still sees the server's process (True when it cannot tell).

        An exec the engine has not started yet (a loaded machine: it can take seconds) reads `Running: false` with
        no exit code: that is not a dead server.
        """
        try:
            state = self._api.exec_inspect(self.exec_id)
        except Exception:  # noqa: BLE001 - unknown: assume it may still run
            return True
        return bool(state.get("Running", True)) or state.get("ExitCode") is None

    def close(self) -> None:
        """Drop the connection; the server exits at EOF of its input (the caller kills it if it hangs)."""
        if not self.alive:
            return
        self.alive = False
        try:
            self._raw.shutdown(socket.SHUT_RDWR)  # before close: http.client would otherwise drain the stream
        except OSError:
            pass
        try:
            self._raw.close()
        except OSError:
            pass
        response = getattr(self._sock, "_response", None)
        if response is not None:
            try:
                response.close()
            except OSError:
                pass

