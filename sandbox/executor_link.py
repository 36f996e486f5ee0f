"""What DockerSandbox needs around the persistent executor: whether it can run here, and how to end a bad one.

Kept apart from sandbox/docker.py so that file only wires the executor in.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from tether.sandbox.config import DockerSandboxConfig
from tether.sandbox.engine import socket_path
from tether.sandbox.executor_server import MOUNT, stage_tools, tools_problem

log = logging.getLogger(__name__)

EXECUTOR_LOST = ("\n[TETHER: the sandbox's command executor failed while this command ran ({reason}); the command's "
                 "result is unknown, so it counts as failed (exit 125); what it started was killed and the executor "
                 "restarted: run it again if it is safe to repeat]")

OOM_KILLED = ("\n[TETHER: the sandbox's memory limit ({limit}) was reached while this command ran and the kernel "
              "killed {what}; make it use less memory, or raise sandbox.memory]")
OOM_LOST = ("\n[TETHER: the sandbox's memory limit ({limit}) was reached while this command ran and the kernel "
            "killed the sandbox's command executor; what the command started was killed (exit 137) and the executor "
            "restarted; make it use less memory, or raise sandbox.memory]")

OOM_COUNT = r"""
for p in /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control; do
  [ -r "$p" ] || continue
  while read -r a b; do [ "$a" = oom_kill ] && printf '%s\n' "$b"; done < "$p"; exit 0
done
"""
"""Print the memory cgroup's `oom_kill` count (as the server reads it), or nothing."""

KILL = r"""
s=; IFS= read -r -d '' s < "/proc/$1/stat" 2>/dev/null
f=${s##*) }; set -f; set -- $1 $2 $f; set +f
[ -n "$s" ] && [ "${22}" = "$2" ] && kill -9 "$1" 2>/dev/null
exit 0
"""
"""Kill the server with pid $1 only if it is still the process that started at $2 (a reused pid is left alone)."""


def executor_mount(config: DockerSandboxConfig) -> Path | None:
    """The host folder to mount for the executor, or None when commands must use `docker exec` (said once)."""
    if config.executor != "persistent":
        return None
    problem = None
    if socket_path(config.docker_host) is None:
        problem = "the Docker engine is remote, so the host's tools cannot be mounted"
    else:
        problem = tools_problem()
    if problem is None:
        try:
            return stage_tools()
        except OSError as e:
            problem = f"its tools could not be staged ({e})"
    log.warning("sandbox.executor = persistent, but %s; commands use docker exec", problem)
    return None


def kill_server(container: Any, key: tuple[int, int]) -> None:
    """SIGKILL a dropped server (as the sandbox user: no capabilities are needed), if it is still that process."""
    pid, start = key
    if not pid:
        return
    try:
        container.exec_run([f"{MOUNT}/bash", "-c", KILL, "kill", str(pid), str(start)])
    except Exception as e:  # noqa: BLE001 - best effort: the container's removal ends it anyway
        log.debug("could not kill executor %s: %s", pid, e)


def oom_kills(container: Any) -> int | None:
    """The container's memory cgroup `oom_kill` count, read in the sandbox; None when it cannot be read."""
    try:
        code, out = container.exec_run([f"{MOUNT}/bash", "-c", OOM_COUNT])
    except Exception as e:  # noqa: BLE001 - unknown: the caller reports the executor's loss as such
        log.debug("could not read the oom_kill count: %s", e)
        return None
    text = out.decode(errors="replace").strip() if code == 0 and out else ""
    return int(text) if text.isdigit() else None
