"""How full a container's process table is, read from its pids cgroup (or the engine), and what the model is told.

A fork bomb, or any command that leaves processes behind until the pids
limit is reached, leaves a sandbox in which nothing can start: every later
command fails with "fork: Resource temporarily unavailable" (or the engine's
exit 125). `pid_count()` reads the container's `pids.current` from the host's
cgroup files (cgroup v1 or v2, found through the container's init pid), and
asks the engine (`docker top`) where those are not readable. DockerSandbox
checks it after each command and restarts a full sandbox (sandbox/docker.py).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

FORK_FAILED = "Resource temporarily unavailable"
NOT_STARTED = "OCI runtime exec failed"  # the engine could not start the command's process at all
PIDS_FULL = ("\n[TETHER: this command left processes that filled the sandbox's process table (sandbox.pids_limit "
             "{limit}); they were all killed and the sandbox restarted: its /tmp is empty, the workspace is kept; "
             "exit status set to 137]")
PIDS_FREED = ("[TETHER: processes left running by earlier commands filled the sandbox's process table "
              "(sandbox.pids_limit {limit}); they were all killed and the sandbox restarted (/tmp emptied, workspace "
              "kept) before this command ran]\n")
PIDS_FREED_AFTER = ("\n[TETHER: processes left running by earlier commands filled the sandbox's process table "
                    "(sandbox.pids_limit {limit}); they were all killed and the sandbox restarted (/tmp emptied, "
                    "workspace kept) after this command ran]")


def near_full(count: int, limit: int) -> bool:
    """Whether `count` processes leave too few pids to start commands (a bomb settles a few below the limit)."""
    return count >= limit - max(5, limit // 8)


def pids_file(container: Any) -> Path | None:
    """`pids.current` of the container's cgroup on this host, or None (remote engine, no access)."""
    with contextlib.suppress(Exception):  # any failure: fall back to the engine's own listing
        container.reload()
        pid = int(container.attrs["State"]["Pid"])
        for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
            num, controllers, path = line.split(":", 2)
            for candidate in ((Path("/sys/fs/cgroup/pids") / path.lstrip("/")) if "pids" in controllers.split(",")
                              else None,
                              (Path("/sys/fs/cgroup") / path.lstrip("/")) if num == "0" and not controllers else None):
                if candidate is not None and (candidate / "pids.current").is_file():
                    return candidate / "pids.current"
    return None


def _read(path: Path) -> bytes:
    """A small cgroup file's text, with three system calls (it is read two or three times per command)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)


def fork_refusals(path: Path | None) -> int | None:
    """How often the kernel refused a fork in this cgroup for want of pids (`pids.events` "max"), or None.

    A bomb that settles a few below the limit (its forks fail, some of it
    exits, it forks again) never looks full by count; the kernel's own count
    of refused forks says so without guessing.
    """
    if path is None:
        return None
    with contextlib.suppress(OSError, ValueError):
        for line in _read(path.with_name("pids.events")).splitlines():
            key, _, value = line.partition(b" ")
            if key == b"max":
                return int(value)
    return None


def pid_count(container: Any, path: Path | None) -> int | None:
    """Processes in the container now; None when neither the cgroup nor the engine says."""
    if container is None:
        return None
    if path is not None:
        with contextlib.suppress(OSError, ValueError):
            return int(_read(path))
    with contextlib.suppress(Exception):  # the engine's listing (docker top) runs outside the container
        return len(container.top().get("Processes") or [])
    return None
