"""`tether hook serve`: the guardian kept loaded for the hook's client (see `client`).

One process per Tether home: it takes `hookd/lock` (flock; a second server
exits at once), listens on `hookd/sock` in a 0700 folder, answers only peers
of its own uid (SO_PEERCRED), one connection at a time, with exactly what
`hook.handle` answers in-process. It exits after `IDLE_S` without a call,
on a `stop` request, or when the code it loaded has changed on disk (it then
answers `stale` and the client judges in its own process).

Parts: `code_stamp` (sizes and mtimes of the guardian and adapter sources),
`serve` (the loop), `stop` (ask a running server to exit).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import struct
from pathlib import Path

from tether.runtime.agents import client
from tether.runtime.agents.hook import MAX_PAYLOAD, handle
from tether.runtime.agents.log import append as log_append
from tether.runtime.agents.registry import NAMES

IDLE_S = 900.0
_HEAD_MAX = 4096


def code_stamp() -> tuple[tuple[str, int, int], ...]:
    """What the loaded code was built from: every guardian, adapter and trust-kind source's name, size and mtime."""
    import tether.guardian
    import tether.runtime.agents
    import tether.runtime.trust

    out: list[tuple[str, int, int]] = []
    for pkg in (tether.guardian, tether.runtime.agents, tether.runtime.trust):
        for p in sorted(Path(next(iter(pkg.__path__))).iterdir()):
            if p.suffix in (".py", ".json"):
                st = p.stat()
                out.append((p.name, st.st_size, st.st_mtime_ns))
    return tuple(out)


def _peer_uid(conn: socket.socket) -> int:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def _read_request(conn: socket.socket) -> tuple[dict[str, object], bytes]:
    buf = b""
    while b"\n" not in buf:
        chunk = conn.recv(65536)
        if not chunk or len(buf) > _HEAD_MAX + MAX_PAYLOAD + 2:
            msg = "request ended before its header"
            raise ValueError(msg)
        buf += chunk
    head_raw, body = buf.split(b"\n", 1)
    head = json.loads(head_raw[:_HEAD_MAX])
    size = head.get("size") if isinstance(head, dict) else None
    if not isinstance(size, int) or not 0 <= size <= MAX_PAYLOAD + 1:
        msg = "bad request size"
        raise ValueError(msg)
    while len(body) < size:
        chunk = conn.recv(min(65536, size - len(body)))
        if not chunk:
            break
        body += chunk
    return head, body[:size]


def _answer(conn: socket.socket, stamp: tuple[tuple[str, int, int], ...], home: Path) -> bool:
    """Answer one connection; False when the server should exit."""
    conn.settimeout(client.TIMEOUT_S)
    if _peer_uid(conn) != os.getuid():
        return True
    head, body = _read_request(conn)
    if head.get("stop"):
        conn.sendall(b'{"stopped": true}\n')
        return False
    if code_stamp() != stamp:
        conn.sendall(b'{"stale": true}\n')
        return False
    agent, user_home = head.get("agent"), head.get("home")
    if agent not in NAMES or not isinstance(user_home, str) or not user_home.startswith("/"):
        msg = "bad request header"
        raise ValueError(msg)
    answer, record = handle(agent, body, Path(user_home), home, shadow=head.get("shadow") is True)
    conn.sendall(json.dumps({"code": answer.code, "stdout": answer.stdout, "stderr": answer.stderr}).encode()
                 + b"\n")
    log_append(home, record)
    return True


def serve(home: Path | None = None, idle_s: float = IDLE_S) -> int:
    """Serve until idle, stopped or stale; 0, or 1 when another server holds the lock or the folder is unsafe."""
    home = home or Path(client.tether_home())
    folder = Path(client.state_dir(home))
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(folder, 0o700)
    if not client._private(folder):
        return 1
    lock = os.open(folder / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(lock)
        return 1
    sock_path = folder / "sock"
    with contextlib.suppress(FileNotFoundError):
        sock_path.unlink()
    stamp = code_stamp()
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        srv.bind(str(sock_path))
    finally:
        os.umask(old)
    srv.listen(16)
    srv.settimeout(idle_s)
    (folder / "pid").write_text(f"{os.getpid()}\n")
    try:
        while True:
            try:
                conn, _ = srv.accept()
            except TimeoutError:
                return 0
            with conn:
                try:
                    if not _answer(conn, stamp, home):
                        return 0
                except (OSError, ValueError):  # one bad client: it falls back to judging in its own process
                    continue
    finally:
        srv.close()
        with contextlib.suppress(FileNotFoundError):
            sock_path.unlink()
        os.close(lock)


def stop(home: Path | None = None) -> bool:
    """Ask the server of `home` to exit; whether one answered."""
    folder = Path(client.state_dir(home))
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(client.TIMEOUT_S)
    try:
        conn.connect(str(folder / "sock"))
        conn.sendall(json.dumps({"v": 1, "stop": True, "size": 0}).encode() + b"\n")
        return b"stopped" in conn.recv(100)
    except OSError:
        return False
    finally:
        conn.close()
