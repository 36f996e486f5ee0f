"""Who holds something: a process on this host, told apart from a reused pid by its start time.

Parts: `Holder` (pid, kernel start time, host, run id; `alive()`),
`process_start()`, and the run folder's live marker (`LIVE_FILE`:
`mark_live`, `clear_live`, `pinned`), which `common.snapshot.gc_snapshots`
reads so that no snapshot of a live or paused run is ever pruned.

A pid alone is not an identity: after a crash the kernel may give it to
another process. The start time in `/proc/<pid>/stat` (clock ticks since
boot) cannot be changed by the process, so (pid, start) names one process.
A holder on another host cannot be checked and counts as alive.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

from pydantic import BaseModel, ValidationError

from tether.common.atomic import write_atomic

LIVE_FILE = "live.json"
"""In a run folder while the run is live (or paused for an answer): its holder."""


def process_start(pid: int) -> str:
    """The kernel start time of `pid` (clock ticks since boot), or "" when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


class Holder(BaseModel):
    """One process that holds a workspace or a run."""

    run_id: str
    pid: int
    start: str
    """Kernel start time of `pid`: a reused pid has another."""
    host: str
    since: float
    """When it took hold (epoch seconds)."""
    paused: bool = False
    """The run waits for a person's answer: no process, but its snapshot stays."""

    @classmethod
    def me(cls, run_id: str) -> Holder:
        """This process, holding for `run_id`."""
        pid = os.getpid()
        return cls(run_id=run_id, pid=pid, start=process_start(pid), host=socket.gethostname(), since=time.time())

    def alive(self) -> bool:
        """Whether the holding process still runs (True for another host's: it cannot be checked)."""
        if self.host != socket.gethostname():
            return True
        return bool(self.start) and process_start(self.pid) == self.start

    def same_process(self, other: Holder) -> bool:
        return (self.pid, self.start, self.host) == (other.pid, other.start, other.host)

    def describe(self) -> str:
        """`run R (pid P on HOST since HH:MM:SS)` for messages."""
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.since))
        return f"run {self.run_id} (pid {self.pid} on {self.host}, since {when})"


def read_holder(text: str) -> Holder | None:
    """A holder from its JSON, or None when the text is not one."""
    try:
        return Holder.model_validate(json.loads(text))
    except (ValueError, ValidationError):
        return None


def mark_live(run_folder: os.PathLike[str] | str, holder: Holder) -> None:
    """Write the run folder's live marker (its snapshot is then never pruned)."""
    write_atomic(_path(run_folder), holder.model_dump_json())


def clear_live(run_folder: os.PathLike[str] | str) -> None:
    """Remove the live marker: the run ended."""
    try:
        os.unlink(_path(run_folder))
    except FileNotFoundError:
        pass


def pinned(run_folder: os.PathLike[str] | str) -> bool:
    """Whether the run is live or paused: its marker names a live process, says paused, or cannot be read."""
    try:
        with open(_path(run_folder), encoding="utf-8", errors="replace") as fh:
            text = fh.read(1 << 16)
    except FileNotFoundError:
        return False
    except OSError:
        return True  # cannot tell: keep its snapshot
    holder = read_holder(text)
    return holder is None or holder.paused or holder.alive()


def _path(run_folder: os.PathLike[str] | str) -> Path:
    return Path(run_folder) / LIVE_FILE
