"""One live run per workspace: a lock that knows a live holder from a crashed one.

Parts: `WorkspaceLock` (taken by a run from before its snapshot until it
ends or pauses, and by `tether rollback` and `tether apply` while they
write), `WorkspaceBusyError`, `holder_of()` and `live_folders()` (what the
hand-back of a crashed run must not touch).

Two locks, both released by the kernel when the holder dies:

- an `flock` on the workspace folder itself (a descriptor opened read-only:
  the folder is never written), which any Tether process on this host
  sees, whatever its home;
- the record `<home>/locks/<key>.json`, naming the holder's run id, pid,
  kernel start time and host (common.liveness), for the message, for other
  hosts (which cannot see the flock) and for nested workspaces: a run on a
  folder inside, or around, a live run's workspace is refused too.

A holder whose process is gone, or whose pid now belongs to another process
(another start time), crashed: its lock is taken over. Checks and writes
happen under one `flock` on `<home>/locks/.guard`. A run also marks its own
folder live, so `tether snapshot gc` never prunes its snapshot.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel

from tether.common.atomic import write_atomic
from tether.common.errors import ConfigError
from tether.common.liveness import Holder, clear_live, mark_live

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
def _guard(locks: Path) -> Iterator[None]:
    locks.mkdir(parents=True, exist_ok=True)
    fd = os.open(locks / ".guard", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _read(path: Path) -> LockRecord | None:
    try:
        return LockRecord.model_validate_json(path.read_bytes())
    except (OSError, ValueError):
        return None  # missing, torn or hand-edited: it names nobody and is taken over


def _records(locks: Path) -> Iterator[tuple[Path, LockRecord]]:
    for path in sorted(locks.glob("*.json")) if locks.is_dir() else []:
        record = _read(path)
        if record is not None:
            yield path, record


def _nested(a: Path, b: Path) -> bool:
    return a == b or a.is_relative_to(b) or b.is_relative_to(a)


class WorkspaceLock:
    """The one live run on a workspace. Use as a context manager, or `acquire()` / `release()`.

    Args:
        home: The Tether home (records live in `<home>/locks/`).
        workspace: The person's folder.
        run_id: Who takes it (a run id, or `rollback:RUN` / `apply:RUN` / `sandbox:exec`).
        run_folder: The run's folder, marked live while the lock is held (None for rollback/apply).
        work: A shadow run's copy of the workspace.
    """

    def __init__(self, home: Path, workspace: Path, run_id: str, *, run_folder: Path | None = None,
                 work: Path | None = None) -> None:
        self.locks = home / LOCKS_DIR
        self.workspace = workspace.resolve()
        self.path = self.locks / f"{lock_key(self.workspace)}.json"
        self.run_folder, self.work = run_folder, work
        self.me = Holder.me(run_id)
        self.held = False
        self._fd: int | None = None

    def acquire(self) -> WorkspaceLock:
        """Take the workspace, or raise WorkspaceBusyError naming the live holder."""
        with _guard(self.locks):
            for _, record in _records(self.locks):
                holder = record.holder
                if (_nested(Path(record.workspace), self.workspace) and holder.alive()
                        and not holder.same_process(self.me)):
                    raise WorkspaceBusyError(_busy(self.workspace, holder, Path(record.workspace)))
            self._flock()
            write_atomic(self.path, self._record().model_dump_json())
        self.held = True
        if self.run_folder is not None:
            mark_live(self.run_folder, self.me)
        return self

    def _flock(self) -> None:
        """Hold an flock on the folder itself: any Tether process here sees it, whatever its home."""
        try:
            fd = os.open(self.workspace, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as e:
            msg = f"cannot open workspace {self.workspace}: {e.strerror}; pass an existing folder"
            raise WorkspaceBusyError(msg) from e
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(fd)
            if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise
            msg = (f"workspace {self.workspace} is in use by another Tether run (one live run per workspace; it "
                   "was started with another home); wait for it to end")
            raise WorkspaceBusyError(msg) from e
        self._fd = fd

    def _record(self) -> LockRecord:
        return LockRecord(workspace=str(self.workspace), work=str(self.work) if self.work else None, holder=self.me)

    def attach(self, run_folder: Path, work: Path | None = None) -> None:
        """Name the run's folder (marked live: its snapshot is never pruned) and a shadow run's copy."""
        self.run_folder = run_folder
        if work is not None and work != self.work:
            self.work = work
            with _guard(self.locks):
                if self.held:
                    write_atomic(self.path, self._record().model_dump_json())
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
        with _guard(self.locks):
            record = _read(self.path)
            if record is not None and record.holder.same_process(self.me):
                self.path.unlink(missing_ok=True)
            if self._fd is not None:
                os.close(self._fd)  # the flock goes with it
                self._fd = None

    def __enter__(self) -> WorkspaceLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _busy(workspace: Path, holder: Holder, theirs: Path) -> str:
    what = holder.run_id
    around = "holds" if workspace.is_relative_to(theirs) else "is inside"
    where = "" if theirs == workspace else f" (on {theirs}, which {around} this folder)"
    if what.startswith(("rollback:", "apply:", "sandbox:")):
        return (f"workspace {workspace} is being changed by `tether {what.replace(':', ' ')}`{where} "
                f"(pid {holder.pid} on {holder.host}); wait for it to finish")
    return (f"workspace {workspace} is in use by {holder.describe()}{where}; one live run per workspace: wait for it "
            f"to end, or stop it (Ctrl-C in its terminal, or `kill {holder.pid}`) and `tether resume {holder.run_id}` "
            "later")


def holder_of(home: Path, workspace: Path) -> Holder | None:
    """The live holder of a workspace, if any."""
    record = _read(home / LOCKS_DIR / f"{lock_key(workspace.resolve())}.json")
    return record.holder if record is not None and record.holder.alive() else None


def live_folders(home: Path) -> set[str]:
    """Every folder a live holder uses: the workspaces and the shadow copies."""
    folders: set[str] = set()
    for _, record in _records(home / LOCKS_DIR):
        if record.holder.alive():
            folders.add(record.workspace)
            if record.work:
                folders.add(record.work)
    return folders


__all__ = ["Holder", "LockRecord", "WorkspaceBusyError", "WorkspaceLock", "holder_of", "live_folders"]
