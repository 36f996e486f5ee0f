"""The host-side egress proxy: HTTP CONNECT (and absolute-URI GET/HEAD) on a unix socket, allowlist only.

The sandbox keeps network mode `none`; a folder holding this proxy's socket is
mounted into it, and the in-container forwarder (sandbox/egress_forward.py)
bridges a loopback port to that socket. The proxy listens only while a grant
is open (`EgressProxy.grant()`, one command's run): outside of one there is no
socket to reach. Each connection is decided by sandbox.egress_rules on the
CONNECT target, resolved once on the host, and connected to that address.
Every connection, refused or not, is recorded (`ConnectionRecord`).

Bounded: concurrent connections, the request head, idle time and the bytes
of one grant; closing a grant cuts every connection it opened.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from tether.sandbox.egress_rules import AllowList, Resolver, TargetError, decide, parse_target, system_resolve

SOCKET_NAME = "proxy.sock"
CHUNK = 256 * 1024
_DROPPED_HEADERS = (b"host", b"connection", b"keep-alive")
"""Hop-by-hop headers the proxy writes itself; every `Proxy-*` header is dropped too (it is meant for the proxy)."""
Connector = Callable[[tuple[str, int], float], socket.socket]


class EgressLimits(BaseModel):
    """Bounds of the egress proxy, per grant (one command)."""

    model_config = ConfigDict(extra="forbid")

    max_connections: int = Field(default=32, gt=0, le=1024)
    """Connections open at once; more are refused with 503."""
    idle_timeout_s: float = Field(default=60.0, gt=0, le=3600)
    """A connection with no bytes either way for this long is closed."""
    connect_timeout_s: float = Field(default=10.0, gt=0, le=300)
    """How long the proxy waits for an allowed host to accept."""
    max_bytes: int = Field(default=2 << 30, gt=0)
    """Bytes (both ways, all connections) one grant may carry; past it every connection is cut."""
    head_bytes: int = Field(default=16_384, ge=1024, le=1 << 20)
    """Largest request head (request line and headers) read from the sandbox."""
    max_records: int = Field(default=1000, gt=0, le=1_000_000)
    """Connections recorded one by one per grant; past it the rest are counted in one last record."""


@dataclass
class ConnectionRecord:
    """One connection the sandbox asked for."""

    method: str
    host: str
    port: int
    allowed: bool
    reason: str
    address: str = ""
    bytes_up: int = 0
    bytes_down: int = 0
    seconds: float = 0.0


def direct_connect(address: tuple[str, int], timeout: float) -> socket.socket:
    return socket.create_connection(address, timeout=timeout)


class EgressProxy:
    """One sandbox's proxy; `grant(allow)` opens it for the hosts of one command."""

    def __init__(self, folder: Path, limits: EgressLimits | None = None, *, resolve: Resolver = system_resolve,
                 connector: Connector = direct_connect) -> None:
        self.folder = folder
        self.socket_path = folder / SOCKET_NAME
        self.limits = limits or EgressLimits()
        self._resolve = resolve
        self._connector = connector
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._allow = AllowList()
        self._live: set[socket.socket] = set()
        self._clients = 0
        self._refusers = threading.Semaphore(8)
        self._threads: list[threading.Thread] = []
        self._records: list[ConnectionRecord] = []
        self._bytes = 0
        self._stop = threading.Event()

    @contextlib.contextmanager
    def grant(self, allow: AllowList) -> Iterator[list[ConnectionRecord]]:
        """Listen for the hosts in `allow` while the block runs; yields the records, complete after it."""
        records = self.open(allow)
        try:
            yield records
        finally:
            self.close()

    def open(self, allow: AllowList) -> list[ConnectionRecord]:
        self.close()
        self._allow, self._records, self._bytes, self._clients = allow, [], 0, 0
        self._stop = threading.Event()
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(self.socket_path))
        os.chmod(self.socket_path, 0o666)  # the sandbox user is not the host user
        listener.listen(64)
        listener.settimeout(0.2)
        self._listener = listener
        thread = threading.Thread(target=self._accept, args=(listener, self._stop), daemon=True, name="egress")
        thread.start()
        self._threads = [thread]
        return self._records

    def close(self) -> None:
        """Stop listening, cut every connection, remove the socket; safe to call twice."""
        self._stop.set()
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)  # wakes the accept loop at once
            listener.close()
        with self._lock:
            live = list(self._live)
        for s in live:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
        for t in self._threads:
            t.join(timeout=5)
        self._threads = []
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()

    def _accept(self, listener: socket.socket, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                full = self._clients >= self.limits.max_connections
                if not full:
                    self._live.add(client)
                    self._clients += 1
            if full:
                why = f"more than {self.limits.max_connections} connections at once"
                drain = self._refusers.acquire(blocking=False)  # a few refusals wait for the client; a flood does not
                threading.Thread(target=self._refuse_full, args=(client, why, drain), daemon=True).start()
                continue
            t = threading.Thread(target=self._serve, args=(client, stop), daemon=True, name="egress-conn")
            self._threads.append(t)
            t.start()

    def _refuse_full(self, client: socket.socket, why: str, drain: bool) -> None:
        try:
            self._refuse(client, "-", "-", 0, 503, why, drain=drain)
        finally:
            if drain:
                self._refusers.release()

    def _record(self, record: ConnectionRecord) -> None:
        with self._lock:
            if len(self._records) < self.limits.max_records:
                self._records.append(record)
                return
            if len(self._records) == self.limits.max_records:
                self._records.append(ConnectionRecord(method="-", host="(more)", port=0, allowed=False, reason=""))
            last = self._records[-1]
            last.port += 1  # the count of connections past the limit
            last.allowed = last.allowed or record.allowed
            last.reason = f"{last.port} more connection(s) past {self.limits.max_records}, not recorded one by one"

    def _refuse(self, client: socket.socket, method: str, host: str, port: int, status: int, reason: str,
                *, drain: bool = True) -> None:
        self._record(ConnectionRecord(method=method, host=host, port=port, allowed=False, reason=reason))
        body = f"tether egress proxy refused {host}:{port}: {reason}\n".encode()
        head = (f"HTTP/1.1 {status} {'Forbidden' if status == 403 else 'Refused'}\r\nContent-Type: text/plain\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
        with contextlib.suppress(OSError):
            client.sendall(head + body)
            client.shutdown(socket.SHUT_WR)
            client.settimeout(0.5)  # read what the client still sends, so the close does not reset the answer away
            for _ in range(16 if drain else 0):
                if not client.recv(65536):
                    break
        with contextlib.suppress(OSError):
            client.close()

    def _read_head(self, client: socket.socket) -> tuple[bytes, bytes] | str:
        client.settimeout(self.limits.connect_timeout_s)
        deadline = time.monotonic() + self.limits.connect_timeout_s  # the whole head, not each byte (slowloris)
        data = b""
        while b"\r\n\r\n" not in data:
            if len(data) > self.limits.head_bytes:
                return "request head too large"
            if time.monotonic() > deadline:
                return "no complete request head in time"
            chunk = client.recv(4096)
            if not chunk:
                return "no complete request head"
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        if len(head) + 4 > self.limits.head_bytes:  # the last read may have carried it past the bound
            return "request head too large"
        return head, rest

    def _serve(self, client: socket.socket, stop: threading.Event) -> None:
        try:
            self._handle(client, stop)
        except OSError:
            pass
        except Exception as e:  # noqa: BLE001 - a request the proxy could not handle is refused and journaled
            with contextlib.suppress(OSError):
                self._refuse(client, "-", "-", 0, 400, f"the proxy could not handle the request ({type(e).__name__})")
        finally:
            with self._lock:
                self._live.discard(client)
                self._clients -= 1
            with contextlib.suppress(OSError):
                client.close()

    def _handle(self, client: socket.socket, stop: threading.Event) -> None:
        got = self._read_head(client)
        if isinstance(got, str):  # a slow head is not drained: draining would let it keep the connection
            self._refuse(client, "-", "-", 0, 400, got, drain="in time" not in got)
            return
        head, rest = got
        lines = head.split(b"\r\n")
        parts = lines[0].decode("latin-1").split(" ")
        if len(parts) != 3:
            self._refuse(client, "-", "-", 0, 400, "malformed request line")
            return
        method, uri, version = parts
        out_head = b""
        try:
            if method == "CONNECT":
                target = parse_target(uri)
            elif method in ("GET", "HEAD") and uri.lower().startswith("http://"):
                url = urlsplit(uri)
                target = parse_target(url.netloc, default_port=80)
                path = (url.path or "/") + (f"?{url.query}" if url.query else "")
                kept = [h for h in lines[1:] if (name := h.split(b":", 1)[0].strip().lower()) not in _DROPPED_HEADERS
                        and not name.startswith(b"proxy-")]
                out_head = b"\r\n".join([f"{method} {path} {version}".encode("latin-1"),
                                         f"Host: {url.netloc}".encode("latin-1"), *kept,
                                         b"Connection: close"]) + b"\r\n\r\n"
            else:
                self._refuse(client, method[:16], "-", 0, 405, "only CONNECT and absolute-URI GET/HEAD are proxied")
                return
        except ValueError as e:  # TargetError, or urlsplit on a broken `[...]` authority: refused, and journaled
            self._refuse(client, method, uri[:80], 0, 403 if isinstance(e, TargetError) else 400,
                         str(e) if isinstance(e, TargetError) else f"unreadable URI ({e})")
            return
        with self._lock:
            spent = self._bytes >= self.limits.max_bytes
        if spent:  # a grant past its bytes stays closed: new connections do not get a fresh budget
            self._refuse(client, method, target.host, target.port, 403,
                         f"the grant carried more than {self.limits.max_bytes} bytes")
            return
        decision = decide(target, self._allow, self._resolve)
        if not decision.allowed:
            self._refuse(client, method, target.host, target.port, 403, decision.reason)
            return
        started = time.monotonic()
        record = ConnectionRecord(method=method, host=target.host, port=target.port, allowed=True,
                                  reason=decision.reason, address=decision.address)
        try:
            upstream = self._connector((decision.address, target.port), self.limits.connect_timeout_s)
        except OSError as e:
            why = f"could not connect to {decision.address} ({e})"
            self._refuse(client, method, target.host, target.port, 502, why)
            return
        with self._lock:
            self._live.add(upstream)
        self._record(record)
        try:
            if method == "CONNECT":
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                first = rest
            else:
                first = out_head + rest
            if first:
                with self._lock:
                    self._bytes += len(first)
                    over = self._bytes > self.limits.max_bytes
                if over:
                    record.reason = f"closed: the grant carried more than {self.limits.max_bytes} bytes"
                    return
                upstream.sendall(first)
                record.bytes_up += len(first)
            self._relay(client, upstream, record, stop)
        finally:
            record.seconds = round(time.monotonic() - started, 3)
            with self._lock:
                self._live.discard(upstream)
            with contextlib.suppress(OSError):
                upstream.close()

    def _relay(self, client: socket.socket, upstream: socket.socket, record: ConnectionRecord,
               stop: threading.Event) -> None:
        """Copy bytes both ways until both ends close, the idle time or the grant's bytes run out, or it closes."""
        sel = selectors.DefaultSelector()
        sel.register(client, selectors.EVENT_READ, upstream)
        sel.register(upstream, selectors.EVENT_READ, client)
        open_ends = 2
        idle_since = time.monotonic()
        try:
            while open_ends and not stop.is_set():
                events = sel.select(timeout=0.5)
                if not events:
                    if time.monotonic() - idle_since > self.limits.idle_timeout_s:
                        record.reason = "closed: idle timeout"
                        return
                    continue
                idle_since = time.monotonic()
                for key, _ in events:
                    src: socket.socket = key.fileobj  # type: ignore[assignment]
                    data = src.recv(CHUNK)
                    if not data:
                        sel.unregister(src)
                        open_ends -= 1
                        with contextlib.suppress(OSError):
                            key.data.shutdown(socket.SHUT_WR)
                        continue
                    with self._lock:
                        self._bytes += len(data)
                        over = self._bytes > self.limits.max_bytes
                    if over:
                        record.reason = f"closed: the grant carried more than {self.limits.max_bytes} bytes"
                        return
                    key.data.sendall(data)
                    if src is client:
                        record.bytes_up += len(data)
                    else:
                        record.bytes_down += len(data)
        finally:
            sel.close()
