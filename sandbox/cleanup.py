"""Nothing left behind: owner labels, exit hooks and the orphan collector.

Parts: `owner_labels()` marks a container with the run and the host process
that owns it; `track()`/`untrack()` keep live sandboxes so an `atexit` hook
closes them when the interpreter exits; `install_signal_handlers()` (for
CLIs) turns SIGTERM/SIGHUP into SystemExit so context managers unwind;
`collect()` removes Tether containers whose owner process is gone, which is
all that can be done after a SIGKILL.
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import socket
import threading
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

from tether.sandbox.errors import SandboxError

if TYPE_CHECKING:
    import docker

log = logging.getLogger(__name__)

LABEL = "tether.sandbox"
RUN_LABEL = "tether.run"
PID_LABEL = "tether.pid"
START_LABEL = "tether.pid_start"
HOST_LABEL = "tether.host"
OWNER_KEYS = (LABEL, RUN_LABEL, PID_LABEL, START_LABEL, HOST_LABEL)
"""The owner labels; a step of a networked build blanks them in the image it commits."""


class Closable(Protocol):
    def close(self) -> None: ...


_live: dict[int, Closable] = {}
_lock = threading.Lock()
_hook_installed = False


def process_start(pid: int) -> str:
    """The kernel start time of `pid` (tells a reused PID apart), or "" off Linux."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def owner_labels(run_id: str) -> dict[str, str]:
    """Labels that let `collect()` decide later whether this container is an orphan."""
    pid = os.getpid()
    return {
        LABEL: "1",
        RUN_LABEL: run_id,
        PID_LABEL: str(pid),
        START_LABEL: process_start(pid),
        HOST_LABEL: socket.gethostname(),
    }


def owner_alive(labels: dict[str, str]) -> bool:
    """Whether the process that created a container still runs (True when unsure)."""
    if labels.get(HOST_LABEL) != socket.gethostname():
        return True  # another machine's process: cannot check, so never collect it
    try:
        pid = int(labels.get(PID_LABEL, ""))
    except ValueError:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    started = labels.get(START_LABEL, "")
    return not started or process_start(pid) in ("", started)


def track(sandbox: Closable) -> None:
    """Remember a live sandbox so interpreter exit closes it."""
    global _hook_installed
    with _lock:
        _live[id(sandbox)] = sandbox
        if not _hook_installed:
            atexit.register(close_all)
            _hook_installed = True


def untrack(sandbox: Closable) -> None:
    """Forget a sandbox once it closed."""
    with _lock:
        _live.pop(id(sandbox), None)


def close_all() -> None:
    """Close every tracked sandbox; errors are logged, since this runs at exit."""
    with _lock:
        pending = list(_live.values())
    for sandbox in pending:
        try:
            sandbox.close()
        except SandboxError as e:
            log.warning("closing sandbox at exit failed: %s", e)


def _exit_on_signal(signum: int, _frame: Any) -> None:
    raise SystemExit(128 + signum)


def install_signal_handlers() -> None:
    """Make SIGTERM and SIGHUP unwind like Ctrl-C does (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _exit_on_signal)


class Leftover(BaseModel):
    """One Tether container found by `collect()`."""

    id: str
    name: str
    run: str
    owner_pid: str
    status: str
    removed: bool


def collect(client: docker.DockerClient, *, everything: bool = False) -> list[Leftover]:
    """Remove Tether containers whose owner is dead (all of them with `everything`).

    Returns every Tether container seen, with `removed` telling which went.
    """
    from tether.sandbox.engine import docker_sdk

    errors = docker_sdk().errors
    found: list[Leftover] = []
    # The low-level list returns each container's labels and state in one call; the
    # high-level one inspects each container afterwards, which raises NotFound when
    # another process removes one in between.
    for row in client.api.containers(all=True, filters={"label": f"{LABEL}=1"}):
        labels = row.get("Labels") or {}
        orphan = everything or not owner_alive(labels)
        if orphan:
            try:
                client.api.remove_container(row["Id"], force=True)
            except errors.NotFound:
                pass  # its owner (or another collector) removed it meanwhile
            except errors.APIError as e:
                if getattr(e, "status_code", None) != 409:  # 409: its removal is already in progress
                    log.warning("could not remove %s: %s", row["Id"][:12], e)
                    orphan = False
        names = row.get("Names") or [""]
        found.append(Leftover(
            id=row["Id"][:12], name=names[0].lstrip("/"), run=labels.get(RUN_LABEL, ""),
            owner_pid=labels.get(PID_LABEL, ""), status=row.get("State", ""), removed=orphan,
        ))
    return found
