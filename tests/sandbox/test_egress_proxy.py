"""The host-side egress proxy over its unix socket, against servers on host loopback only.

A spy connector records every address the proxy connects to, so each refusal
is shown to happen by rule, before any connection is tried.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from tether.sandbox.egress import EgressLimits, EgressProxy, direct_connect
from tether.sandbox.egress_rules import AllowList


class Upstream:
    """A TCP server on 127.0.0.1 that answers every connection with what it received (until a blank line)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        data = b""
        conn.settimeout(5)
        try:
            while b"\r\n\r\n" not in data and b"END" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
            self.received.append(data)
            conn.sendall(b"HTTP/1.0 200 OK\r\n\r\necho:" + data)
        except OSError:
            pass
        finally:
            conn.close()


def _local(upstream: Upstream) -> AllowList:
    """A grant of the upstream's address, which the person named in config."""
    return AllowList.of([f"127.0.0.1:{upstream.port}"], [f"127.0.0.1:{upstream.port}"])


@pytest.fixture
def upstream():
    u = Upstream()
    yield u
    u.sock.close()


@pytest.fixture
def proxy(tmp_path: Path):
    connected: list[tuple[str, int]] = []

    def spy(address, timeout):
        connected.append(address)
        return direct_connect(address, timeout)

    p = EgressProxy(tmp_path, EgressLimits(idle_timeout_s=1.0), connector=spy)
    p.connected = connected  # type: ignore[attr-defined]
    yield p
    p.close()


def _ask(proxy: EgressProxy, request: bytes, then: bytes = b"") -> bytes:
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.settimeout(10)
    c.connect(str(proxy.socket_path))
    c.sendall(request)
    if then:
        time.sleep(0.2)
        c.sendall(then)
    out = b""
    while True:
        chunk = c.recv(65536)
        if not chunk:
            break
        out += chunk
    c.close()
    return out


def test_proxy_connect_to_a_named_loopback_address_reaches_it_and_is_recorded(proxy, upstream):
    with proxy.grant(_local(upstream)) as records:
        out = _ask(proxy, f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\nHost: x\r\n\r\n".encode(), b"hello END")
    assert out.startswith(b"HTTP/1.1 200") and b"echo:hello END" in out
    assert proxy.connected == [("127.0.0.1", upstream.port)]
    [r] = records
    assert r.allowed and r.method == "CONNECT" and r.bytes_up == len(b"hello END") and r.bytes_down > 0


@pytest.mark.parametrize("target", ["169.254.169.254:80", "10.0.0.1:443", "172.16.0.1:443", "192.168.1.1:443",
                                    "100.64.0.1:443", "0.0.0.0:80", "[::1]:443", "[fd00::1]:443",
                                    "2130706433:80", "[::ffff:127.0.0.1]:80", "localhost:{port}", "127.0.0.1:{port}",
                                    "evil.example.com:443"])
def test_proxy_refuses_metadata_private_loopback_not_named_and_hosts_off_the_allowlist(proxy, upstream, target):
    """The grant names the metadata address, but no person named it in config: refused, as is every other."""
    target = target.format(port=upstream.port)
    with proxy.grant(AllowList.of(["pypi.org", "localhost", "169.254.169.254:80"], ["10.0.0.1:80"])) as records:
        out = _ask(proxy, f"CONNECT {target} HTTP/1.1\r\n\r\n".encode())
    assert out.startswith(b"HTTP/1.1 403") and b"tether egress proxy refused" in out
    assert proxy.connected == [] and upstream.received == []
    [r] = records
    assert not r.allowed and r.reason


def test_proxy_host_header_does_not_decide_a_plain_get(proxy, upstream):
    allow = _local(upstream)
    with proxy.grant(allow) as records:
        refused = _ask(proxy, f"GET http://169.254.169.254/latest HTTP/1.1\r\nHost: 127.0.0.1:{upstream.port}\r\n\r\n"
                       .encode())
        allowed = _ask(proxy, f"GET http://127.0.0.1:{upstream.port}/simple/ HTTP/1.1\r\nHost: 169.254.169.254\r\n"
                       "Proxy-Authorization: x\r\n\r\n".encode())
    assert refused.startswith(b"HTTP/1.1 403")
    assert proxy.connected == [("127.0.0.1", upstream.port)]
    [sent] = upstream.received
    assert sent.startswith(b"GET /simple/ HTTP/1.1\r\n") and f"Host: 127.0.0.1:{upstream.port}".encode() in sent
    assert b"169.254.169.254" not in sent and b"Proxy-Authorization" not in sent and b"Connection: close" in sent
    assert b"echo:GET /simple/" in allowed
    assert [r.allowed for r in records] == [False, True]


def test_proxy_sni_inside_an_allowed_tunnel_only_reaches_the_allowed_address(proxy, upstream):
    """The CONNECT target decides; a TLS hello naming another host goes to the allowed address, nowhere else."""
    hello = b"\x16\x03\x01\x00\x40\x01\x00\x00\x3c\x03\x03" + b"metadata.google.internal" + b" END"
    with proxy.grant(_local(upstream)):
        _ask(proxy, f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\nHost: 169.254.169.254:80\r\n\r\n".encode(), hello)
    assert proxy.connected == [("127.0.0.1", upstream.port)]


def test_proxy_refuses_other_methods_and_https_absolute_uris(proxy, upstream):
    with proxy.grant(_local(upstream)) as records:
        for req in (f"POST http://127.0.0.1:{upstream.port}/ HTTP/1.1\r\n\r\n",
                    f"GET https://127.0.0.1:{upstream.port}/ HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\n\r\n",
                    "garbage\r\n\r\n"):
            assert not _ask(proxy, req.encode()).startswith(b"HTTP/1.1 200")
    assert proxy.connected == [] and len(records) == 4 and not any(r.allowed for r in records)


def test_proxy_bounds_request_head_idle_time_and_bytes(tmp_path, upstream):
    p = EgressProxy(tmp_path, EgressLimits(idle_timeout_s=0.5, max_bytes=2000, head_bytes=1024))
    allow = _local(upstream)
    try:
        with p.grant(allow) as records:
            assert _ask(p, b"GET http://x/ HTTP/1.1\r\n" + b"X: " + b"a" * 5000).startswith(b"HTTP/1.1 400")
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.connect(str(p.socket_path))
            c.sendall(f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\n\r\n".encode())
            c.settimeout(5)
            assert c.recv(100).startswith(b"HTTP/1.1 200")
            start = time.monotonic()
            assert c.recv(100) == b""  # nothing sent: the idle timeout closes it
            assert time.monotonic() - start < 4
            c.close()
            _ask(p, f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\n\r\n".encode(), b"x" * 5000 + b" END")
        assert "idle timeout" in records[1].reason and "more than 2000 bytes" in records[2].reason
    finally:
        p.close()


def test_proxy_limits_connections_at_once(tmp_path, upstream):
    p = EgressProxy(tmp_path, EgressLimits(max_connections=2, idle_timeout_s=5))
    held = []
    try:
        with p.grant(_local(upstream)) as records:
            for _ in range(2):
                c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                c.connect(str(p.socket_path))
                c.sendall(f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\n\r\n".encode())
                c.settimeout(5)
                assert c.recv(100).startswith(b"HTTP/1.1 200")
                held.append(c)
            assert _ask(p, f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\n\r\n".encode()).startswith(b"HTTP/1.1 503")
        assert sum(not r.allowed for r in records) == 1
    finally:
        for c in held:
            c.close()
        p.close()


def test_proxy_listens_only_while_a_grant_is_open_and_closing_cuts_live_tunnels(proxy, upstream):
    assert not proxy.socket_path.exists()
    with proxy.grant(_local(upstream)):
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(str(proxy.socket_path))
        c.sendall(f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\n\r\n".encode())
        c.settimeout(5)
        assert c.recv(100).startswith(b"HTTP/1.1 200")
    assert not proxy.socket_path.exists()
    assert c.recv(100) == b""  # the grant's end cut the tunnel
    c.close()
    with pytest.raises(OSError):
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect(str(proxy.socket_path))


def test_proxy_records_are_bounded_per_grant(tmp_path):
    p = EgressProxy(tmp_path, EgressLimits(max_records=3))
    try:
        with p.grant(AllowList.of(["pypi.org"])) as records:
            for _ in range(6):
                _ask(p, b"CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n")
        assert len(records) == 4 and records[-1].host == "(more)" and "3 more connection(s)" in records[-1].reason
    finally:
        p.close()


@pytest.mark.parametrize("uri", ["http://[127.0.0.1]:{port}/", "http://[]:{port}/", "http://[127.0.0.1/",
                                 "http://127.0.0.1]:{port}/", "http://[::1/x"])
def test_proxy_journals_a_get_whose_authority_cannot_be_read(proxy, upstream, uri):
    """Blind red-team 2026-12-02 (cases 37, 38): a broken `[...]` authority closed the connection with no record."""
    with proxy.grant(_local(upstream)) as records:
        out = _ask(proxy, f"GET {uri.format(port=upstream.port)} HTTP/1.1\r\n\r\n".encode())
    assert out.startswith(b"HTTP/1.1 40") and b"tether egress proxy refused" in out
    assert proxy.connected == [] and upstream.received == []
    [r] = records
    assert not r.allowed and r.reason


def test_proxy_bounds_the_whole_request_head_in_time(tmp_path, upstream):
    """Blind red-team 2026-12-02 (case 35): one byte every 0.3 s kept a connection open past every bound."""
    p = EgressProxy(tmp_path, EgressLimits(connect_timeout_s=1.0, idle_timeout_s=1.0))
    try:
        with p.grant(_local(upstream)) as records:
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.settimeout(10)
            c.connect(str(p.socket_path))
            start, out = time.monotonic(), b""
            try:
                for ch in b"GET http://127.0.0.1/ HTTP/1.1\r\nX-Slow: " + b"a" * 40:
                    c.sendall(bytes([ch]))
                    time.sleep(0.3)
                    if time.monotonic() - start > 6:
                        break
            except OSError:
                pass  # the proxy closed it: what we want
            with __import__("contextlib").suppress(OSError):
                out = c.recv(65536)
            c.close()
            time.sleep(0.3)
        assert time.monotonic() - start < 6, "the proxy kept a slow request head open"
        assert out == b"" or out.startswith(b"HTTP/1.1 400")
        assert records and not records[0].allowed
    finally:
        p.close()


def _send(p: EgressProxy, request: bytes) -> bytes:
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.settimeout(10)
    c.connect(str(p.socket_path))
    out = b""
    try:
        c.sendall(request)
        while True:
            chunk = c.recv(65536)
            if not chunk:
                break
            out += chunk
    except OSError:
        pass
    finally:
        c.close()
    return out


def test_proxy_byte_budget_holds_across_connections_of_one_grant(tmp_path, upstream):
    """Blind red-team rt22 (max_bytes): each new connection of a grant past its budget still got its request
    through (98,625 bytes with a 3,000-byte budget over 25 connections); the first bytes were not counted."""
    p = EgressProxy(tmp_path, EgressLimits(max_bytes=3000, idle_timeout_s=1.0))
    try:
        with p.grant(_local(upstream)) as records:
            for _ in range(25):
                _send(p, b"GET http://127.0.0.1:%d/ HTTP/1.1\r\nX-Pad: %s\r\n\r\n" % (upstream.port, b"a" * 3900))
        delivered = sum(len(r) for r in upstream.received)
        assert delivered <= 3000, delivered
        assert any("more than 3000 bytes" in r.reason for r in records)
        assert len(records) == 25  # every refused connection is still journaled
    finally:
        p.close()


def test_proxy_request_head_bound_is_exact(tmp_path, upstream):
    """Blind red-team rt22: heads of 16,445 and 18,049 bytes passed the 16 KiB bound (the last read carried them)."""
    p = EgressProxy(tmp_path, EgressLimits(head_bytes=16_384, idle_timeout_s=1.0))
    try:
        with p.grant(_local(upstream)) as records:
            for size in (16_445, 18_049, 20_000):
                pad = b"a" * (size - 60)
                out = _send(p, b"GET http://127.0.0.1:%d/ HTTP/1.1\r\nX-Pad: %s\r\n\r\n" % (upstream.port, pad))
                assert out.startswith(b"HTTP/1.1 400"), out[:40]
            ok = _send(p, b"GET http://127.0.0.1:%d/ HTTP/1.1\r\nX-Pad: %s\r\n\r\n" % (upstream.port, b"a" * 15_000))
            assert ok.startswith(b"HTTP/1.0 200")
        assert not any(len(r) > 16_384 for r in upstream.received)
        assert sum(1 for r in records if not r.allowed) == 3
    finally:
        p.close()


def test_proxy_drops_every_proxy_header(proxy, upstream):
    """Blind red-team rt22: Proxy-Foo, proxy-bar and Proxy-Secret-Token reached the origin."""
    with proxy.grant(_local(upstream)):
        _send(proxy, b"GET http://127.0.0.1:%d/ HTTP/1.1\r\nProxy-Foo: 1\r\nproxy-bar: 2\r\nPROXY-Secret-Token: s\r\n"
                     b"Proxy-Authorization: Basic x\r\nX-Kept: yes\r\n\r\n" % upstream.port)
    got = upstream.received[-1].lower()
    assert b"proxy-" not in got and b"x-kept: yes" in got
