"""The hook's fast path: ask a warm `tether hook serve` process over a unix socket.

A new Python process that imports the guardian pays for ~60 modules on every
agent command; the client imports only `socket` and `json`, sends the payload
to a server that has the guardian loaded, and prints its answer. When there is
no server (or it is stale, slow, or answers nonsense) the caller judges in
its own process, as before, and starts a server for the next call: the
server only makes the hook faster, never decides differently.

Parts:
    state_dir: the private folder of the socket (`TETHER_HOME/hookd`, 0700,
        owned by this user: the client refuses any other, so no one else can
        answer for the guardian).
    ask: payload -> (code, stdout, stderr), or None when no server answered.
    start_server: start `tether hook serve` in the background (detached).
TETHER_HOOK_SERVER=1 turns the server on; off (the default), every call judges in-process.
"""

from __future__ import annotations

import json
import os
import stat
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket

TIMEOUT_S = 10.0
MAX_REPLY = 1 << 20


def tether_home() -> str:
    """Tether's home as the config resolves it by default (TETHER_HOME, else the XDG data folder).

    Plain strings, not pathlib: this module is on the per-call path and pathlib costs more than the rest.
    """
    env = os.environ.get("TETHER_HOME", "").strip()
    if env:
        return os.path.abspath(os.path.expanduser(env))
    data = os.environ.get("XDG_DATA_HOME", "").strip()
    base = os.path.expanduser(data) if data else os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(os.path.abspath(base), "tether")


def state_dir(home: str | os.PathLike[str] | None = None) -> str:
    """The server's private folder (not created here)."""
    return os.path.join(os.fspath(home) if home is not None else tether_home(), "hookd")


def enabled() -> bool:
    """Whether the hook may use (and start) a server: only when the person asks (TETHER_HOOK_SERVER=1).

    Any process of the person's uid can stop the server and answer in its place, and a coding agent runs as
    that uid: with the server on, the agent could answer for the guardian. Off, every call judges in-process.
    """
    return os.environ.get("TETHER_HOOK_SERVER", "0") == "1"


def _private(folder: str | os.PathLike[str]) -> bool:
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def _recv_line(conn: socket.socket) -> bytes:
    buf = b""
    while b"\n" not in buf:
        chunk = conn.recv(65536)
        if not chunk:
            break
        buf += chunk
        if len(buf) > MAX_REPLY:
            return b""
    return buf.split(b"\n", 1)[0]


def ask(agent: str, data: bytes, user_home: str, folder: str | None = None,
        shadow: bool = False) -> tuple[int, str, str] | None:
    """The server's answer to one payload, or None (no server, stale, or a reply that is not an answer)."""
    folder = folder or state_dir()
    sock_path = os.path.join(folder, "sock")
    if not _private(folder) or len(sock_path) > 100:
        return None
    import socket  # here, not at the top: with the server off (the default) the hook never needs it

    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(TIMEOUT_S)
    try:
        conn.connect(sock_path)
        head = json.dumps({"v": 1, "agent": agent, "home": user_home, "size": len(data),
                           "shadow": shadow}).encode()
        conn.sendall(head + b"\n" + data)
        reply = json.loads(_recv_line(conn) or b"null")
    except (OSError, ValueError):
        return None
    finally:
        conn.close()
    if not isinstance(reply, dict) or reply.get("stale"):
        return None
    code, out, err = reply.get("code"), reply.get("stdout"), reply.get("stderr")
    if not isinstance(code, int) or isinstance(code, bool) or not isinstance(out, str) or not isinstance(err, str):
        return None
    if code not in (0, 2) or (code == 2 and not err.strip()):
        return None  # the hook's contract: allow/answer (0) or block with a reason (2); anything else is judged here
    return code, out, err


def start_server() -> None:
    """Start `tether hook serve` detached from this process (errors ignored: the next call judges in-process)."""
    import subprocess

    try:
        subprocess.Popen([sys.executable, "-m", "tether", "hook", "serve"], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                         close_fds=True, cwd="/")  # not the agent's project: it may go away
    except OSError:
        return
