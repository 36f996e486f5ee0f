"""One live run per workspace: a lock that knows a live holder from a crashed one.

Parts: `WorkspaceLock` (taken by a run from before its snapshot until it
ends or pauses, and by `tether rollback` and `tether apply` while they
write), `WorkspaceBusyError`, `holder_of()` and `live_folders()` (what the
hand-back of a crashed run must not touch).

The lock is `<home>/locks/<key>.json`, naming the holder's run id, pid,
kernel start time and host (common.liveness). A holder whose process is
gone, or whose pid now belongs to another process (another start time),
crashed: its lock is taken over. Checking and writing happen under an
`flock` on `<key>.lock`, so two runs starting at once cannot both win. A
run also marks its own folder live, so `tether snapshot gc` never prunes
its snapshot.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel

from tether.common.atomic import write_atomic
from tether.common.errors import ConfigError
from tether.common.liveness import Holder, clear_live, mark_live, read_holder

LOCKS_DIR = "locks"


class WorkspaceBusyError(ConfigError):
    """Another live run (or rollback, or apply) holds the workspace."""


class LockRecord(BaseModel):
    """What `<home>/locks/<key>.json` holds."""

    workspace: str
    work: str | None = None
    """A shadow run's copy, which the sandbox was lent (the hand-back of a crash must not touch it while live)."""
    holder: Holder


def lock_key(workspace: Path) -> str:
    """The lock file's name for a workspace (its resolved path, hashed)."""
    return hashlib.sha256(str(workspace).encode("utf-8", "surrogateescape")).hexdigest()[:16]


@contextlib.contextmanager
def _guard(locks: Path, key: str) -> Iterator[None]:
    locks.mkdir(parents=True, exist_ok=True)
    fd = os.open(locks / f"{key}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _read(path: Path) -> LockRecord | None:
    try:
        return LockRecord.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return None  # a torn or hand-edited lock names nobody: it is taken over


class WorkspaceLock:
    """The one live run on a workspace. Use as a context manager, or `acquire()` / `release()`.

    Args:
        home: The Tether home (locks live in `<home>/locks/`).
        workspace: The person's folder.
        run_id: Who takes it (a run id, or `rollback:RUN` / `apply:RUN`).
        run_folder: The run's folder, marked live while the lock is held (None for rollback/apply).
        work: A shadow run's copy of the workspace.
    """

    def __init__(self, home: Path, workspace: Path, run_id: str, *, run_folder: Path | None = None,
                 work: Path | None = None) -> None:
        self.locks = home / LOCKS_DIR
        self.workspace = workspace.resolve()
        self.key = lock_key(self.workspace)
        self.path = self.locks / f"{self.key}.json"
        self.run_folder, self.work = run_folder, work
        self.me = Holder.me(run_id)
        self.held = False

    def acquire(self) -> WorkspaceLock:
        """Take the workspace, or raise WorkspaceBusyError naming the live holder."""
        with _guard(self.locks, self.key):
            record = _read(self.path)
            if record is not None and record.holder.alive() and not record.holder.same_process(self.me):
                raise WorkspaceBusyError(_busy(self.workspace, record.holder))
            record = LockRecord(workspace=str(self.workspace), work=str(self.work) if self.work else None,
                                holder=self.me)
            write_atomic(self.path, record.model_dump_json())
        self.held = True
        if self.run_folder is not None:
            mark_live(self.run_folder, self.me)
        return self

    def attach(self, run_folder: Path, work: Path | None = None) -> None:
        """Name the run's folder (marked live: its snapshot is never pruned) and a shadow run's copy."""
        self.run_folder = run_folder
        if work is not None and work != self.work:
            self.work = work
            with _guard(self.locks, self.key):
                record = _read(self.path)
                if record is not None and record.holder.same_process(self.me):
                    write_atomic(self.path, record.model_copy(update={"work": str(work)}).model_dump_json())
        if self.held:
            mark_live(run_folder, self.me)

    def release(self, *, paused: bool = False) -> None:
        """Give the workspace up; a paused run keeps its folder pinned (its snapshot is not pruned)."""
        if not self.held:
            return
        self.held = False
        if self.run_folder is not None:
            if paused:
                mark_live(self.run_folder, self.me.model_copy(update={"paused": True}))
            else:
                clear_live(self.run_folder)
        with _guard(self.locks, self.key):
            record = _read(self.path)
            if record is not None and record.holder.same_process(self.me):
                self.path.unlink(missing_ok=True)

    def __enter__(self) -> WorkspaceLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _busy(workspace: Path, holder: Holder) -> str:
    what = holder.run_id
    if what.startswith(("rollback:", "apply:")):
        return (f"workspace {workspace} is being changed by `tether {what.replace(':', ' ')}` "
                f"(pid {holder.pid} on {holder.host}); wait for it to finish")
    return (f"workspace {workspace} is in use by {holder.describe()}; one live run per workspace: wait for it to end, "
            f"or stop it (Ctrl-C in its terminal, or `kill {holder.pid}`) and `tether resume {holder.run_id}` later")


def holder_of(home: Path, workspace: Path) -> Holder | None:
    """The live holder of a workspace, if any."""
    record = _read(home / LOCKS_DIR / f"{lock_key(workspace.resolve())}.json")
    return record.holder if record is not None and record.holder.alive() else None


def live_folders(home: Path) -> set[str]:
    """Every folder a live holder uses: the workspaces and the shadow copies."""
    folders: set[str] = set()
    locks = home / LOCKS_DIR
    for path in locks.glob("*.json") if locks.is_dir() else []:
        record = _read(path)
        if record is not None and record.holder.alive():
            folders.add(record.workspace)
            if record.work:
                folders.add(record.work)
    return folders


__all__ = ["Holder", "LockRecord", "WorkspaceBusyError", "WorkspaceLock", "holder_of", "live_folders", "read_holder"]
