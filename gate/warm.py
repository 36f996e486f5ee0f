"""The gate's two fresh sandboxes, started while the run works and handed to the gate when it begins.

Why: starting two sandboxes took most of the gate's time. `WarmSides`
starts them in the background (the runner calls `start()` when the run's
first command starts) and the gate takes them with `before_side()` and
`after_side()`; `close()` removes whatever was not handed over and is safe
on every exit path (it waits for a start still under way, so nothing is left
running). `scan()` runs R14's scan of the start files meanwhile
(gate.known.scan_known), so the gate scans only bytes the run changed.

The safety of a fresh side is kept:
- they are new containers on scratch folders in the run folder, never the
  run's container, and nothing of theirs is mounted in it; a run folder that
  lies inside the workspace (where the run's container could write) gets no
  warm sides at all;
- the pre-run copy is built from the snapshot when it starts, and its stat
  signature (inode, mode, size, mtime and ctime of every entry) is taken once
  the sandbox holds it: a copy that changed by hand-over time is thrown away
  with its sandbox and built afresh;
- the after side starts on an empty folder that the gate fills with its copy
  of the final workspace at hand-over (moved in, given to the sandbox's user);
  a folder no longer the same empty one is not used.
Any failure falls back to the cold path (a sandbox started there and then).
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from tether.common.snapshot import SNAPSHOT_DIR
from tether.common.walk import DIR_FLAGS, open_root, remove_path
from tether.gate.copies import build_after, build_before
from tether.gate.known import KnownCache, scan_known
from tether.sandbox.base import ExecResult, OutputScanner, Sandbox
from tether.sandbox.processes import Proc

log = logging.getLogger(__name__)

WARM_BEFORE_DIR = "gate-before-warm"
"""The pre-run copy the warm before side starts on."""
WARM_AFTER_DIR = "gate-after-warm"
"""The empty folder the warm after side starts on (filled at hand-over)."""
Signature = dict[str, tuple[int, ...]]


def signature(root: Path) -> Signature | None:
    """Every entry below `root` (and `root` itself) by inode, mode, size, mtime and ctime; None if unreadable.

    Any write, rename, chmod or chown changes an entry's ctime, which no
    process can set back, so an equal signature means an untouched tree.
    Walked by descriptor with a stack (any depth, no link followed).
    """
    out: Signature = {}
    try:
        st = os.lstat(root)
        out[""] = _sig(st)
        stack = [("", open_root(root))]
        while stack:
            rel, fd = stack.pop()
            try:
                with os.scandir(fd) as it:
                    for entry in it:
                        sub = f"{rel}/{entry.name}" if rel else entry.name
                        est = entry.stat(follow_symlinks=False)
                        out[sub] = _sig(est)
                        if stat.S_ISDIR(est.st_mode):
                            stack.append((sub, os.open(entry.name, DIR_FLAGS, dir_fd=fd)))
            finally:
                os.close(fd)
    except OSError:
        return None
    return out


def _sig(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_ino, st.st_mode, st.st_uid, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except OSError:
        return True  # unknown: no warm side


class WarmSides:
    """The before and after sandboxes of one run's gate, started ahead of it.

    Args:
        run_dir: The run's folder (the snapshot and the scratch folders live there).
        workspace: The run's work folder (to refuse a run folder inside it).
        start_box: Starts a fresh sandbox on a scratch folder (the runner's factory).
    """

    def __init__(self, run_dir: Path, workspace: Path, start_box: Callable[[Path], Sandbox]) -> None:
        self.run_dir, self.workspace, self._start_box = run_dir, workspace, start_box
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._before: Future[tuple[Sandbox, Signature | None]] | None = None
        self._after: Future[tuple[Sandbox, tuple[int, ...]]] | None = None
        self._done = False
        """Handed over or closed: never started (again)."""
        self._started = False
        self._known: Future[KnownCache] | None = None
        self.used: list[str] = []
        """The sides the gate took warm ("before", "after"), for the bench and the tests."""

    @property
    def after_dir(self) -> Path:
        return self.run_dir / WARM_AFTER_DIR

    @property
    def before_dir(self) -> Path:
        return self.run_dir / WARM_BEFORE_DIR

    def scan(self, files: Iterable[str]) -> None:
        """Scan the workspace's `files` (those at the run's start) for the secret values R14 looks for again, in
        the background (gate.known.scan_known); `known()` hands the result to the gate."""
        with self._lock:
            if self._done or self._known is not None:
                return
            self._known = self._ensure_pool().submit(scan_known, self.workspace, list(files))

    def known(self) -> KnownCache | None:
        """The scan's cache (waiting for it), or None when there is none."""
        with self._lock:
            scanning = self._known
        if scanning is None:
            return None
        try:
            return scanning.result()
        except Exception:  # noqa: BLE001 - the gate scans everything itself then
            return None

    def _ensure_pool(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=3, thread_name_prefix="tether-warm-gate")
        return self._pool

    def start(self) -> None:
        """Start both sides in the background (once; never after the hand-over, never on a run folder that lies
        in the workspace)."""
        with self._lock:
            if self._done or self._before is not None or self._after is not None or self._started \
                    or _inside(self.run_dir, self.workspace):
                return
            self._started = True
            self._ensure_pool()
            assert self._pool is not None
            if (self.run_dir / SNAPSHOT_DIR / "manifest.json").is_file():
                self._before = self._pool.submit(self._start_before)
            self._after = self._pool.submit(self._start_after)

    def wait_started(self) -> None:
        """Wait until both starts under way have finished, failed or not (the bench and the tests use it)."""
        with self._lock:
            pending = [f for f in (self._before, self._after) if f is not None]
        for starting in pending:
            with contextlib.suppress(Exception):
                starting.result()

    def _start_before(self) -> tuple[Sandbox, Signature | None]:
        folder = self.before_dir
        if folder.exists():
            remove_path(folder)
        os.rename(build_before(self.run_dir, self.workspace, []), folder)  # from the snapshot, as at the gate
        box = self._start_box(folder)
        return box, signature(folder)  # taken after the start: the sandbox's hand-over changed owners

    def _start_after(self) -> tuple[Sandbox, tuple[int, ...]]:
        folder = self.after_dir
        if folder.exists():
            remove_path(folder)
        folder.mkdir(mode=0o700)
        box = self._start_box(folder)
        return box, _sig(os.lstat(folder))

    def _take(self, side: str) -> Future[Any] | None:
        with self._lock:
            self._done = True
            starting = self._before if side == "before" else self._after
            if side == "before":
                self._before = None
            else:
                self._after = None
        return starting

    def before_side(self, cold: Callable[[], Sandbox], cold_dir: Path) -> tuple[Callable[[], Sandbox], Path]:
        """What starts the before side and its folder: the warm one if its pre-run copy is untouched (else one
        started afresh from the snapshot on the same folder), or `cold()` on `cold_dir` when none was started."""
        starting = self._take("before")
        if starting is None:
            return cold, cold_dir
        folder = self.before_dir

        def take() -> Sandbox:
            try:
                box, sig = starting.result()
            except Exception as e:  # noqa: BLE001 - the cold path says what is wrong, if anything still is
                log.warning("the gate's warm before side did not start (%s); starting one now", e)
                return _Handed(self._start_before()[0], self, folder)
            if sig is None or signature(folder) != sig:
                log.warning("the gate's pre-run copy changed while the run worked; building it again")
                _close(box)
                box, _ = self._start_before()  # afresh from the snapshot, on the same folder
            else:
                self.used.append("before")
            return _Handed(box, self, folder)

        return take, folder

    def after_side(self, workspace: Path, cold: Callable[[], Sandbox], cold_dir: Path
                   ) -> tuple[Callable[[], Sandbox], Path]:
        """What starts the after side and the folder it works on: the warm one, filled with a copy of the final
        workspace, or `cold()` on `cold_dir`."""
        starting = self._take("after")
        if starting is None:
            return cold, cold_dir
        folder = self.after_dir

        def take() -> Sandbox:
            box, sig = starting.result()  # a failed start is the gate's sandbox failure, as a cold one's would be
            try:
                if _sig(os.lstat(folder)) != sig or os.listdir(folder):
                    msg = f"{folder} changed while the run worked"
                    raise OSError(msg)
                fill(folder, build_after(self.run_dir, workspace))
            except BaseException:
                _close(box)
                raise
            self.used.append("after")
            return _Handed(box, self, folder)

        return take, folder

    def retire(self, box: Sandbox, folder: Path | None) -> None:
        """Remove `box`, then its scratch folder, in the background (joined by `close()`)."""
        def work() -> None:
            _close(box)
            if folder is not None:
                with contextlib.suppress(OSError):
                    remove_path(folder)
        with self._lock:
            pool = self._pool
        if pool is not None:
            try:
                pool.submit(work)
                return
            except RuntimeError:  # shutting down (close() waits here): remove it now
                pass
        work()

    def release(self) -> None:
        """Retire the sides the gate did not take, without waiting (the gate's end)."""
        with self._lock:
            self._done = True
            pending = [(self._before, self.before_dir), (self._after, self.after_dir)]
            self._before = self._after = None
        for starting, folder in pending:
            if starting is not None:
                starting.add_done_callback(lambda f, d=folder: self._retire_started(f, d))

    def _retire_started(self, starting: Future[Any], folder: Path) -> None:
        try:
            box = starting.result()[0]
        except Exception:  # noqa: BLE001 - it never started: nothing to remove but its folder
            box = None
        if box is not None:
            self.retire(box, folder)
        else:
            with contextlib.suppress(OSError):
                remove_path(folder)

    def close(self) -> None:
        """Remove every side not yet removed, waiting for starts and removals under way (every exit path)."""
        self.release()
        with self._lock:
            pool = self._pool
        if pool is not None:
            pool.shutdown(wait=True)  # the starts, then the removals they queued
            with self._lock:
                self._pool = None
        for folder in (self.before_dir, self.after_dir):
            with contextlib.suppress(OSError):
                remove_path(folder)


class _Handed:
    """A warm side as the gate uses it: the sandbox itself, but `close()` retires it in the background."""

    def __init__(self, box: Sandbox, warm: WarmSides, folder: Path) -> None:
        self._box, self._warm, self._folder = box, warm, folder
        self.workspace, self.notices = box.workspace, box.notices

    @property
    def stream_scanner(self) -> Callable[[], OutputScanner] | None:
        return self._box.stream_scanner

    def exec(self, command: str, *, timeout_s: float | None = None, cwd: str | None = None) -> ExecResult:
        return self._box.exec(command, timeout_s=timeout_s, cwd=cwd)

    def egress(self, hosts: Iterable[str]) -> AbstractContextManager[list[Any]]:
        return self._box.egress(hosts)

    def processes(self) -> list[Proc]:
        return self._box.processes()

    def close(self) -> None:
        self._warm.retire(self._box, self._folder)


def _close(box: Sandbox) -> None:
    try:
        box.close()
    except Exception as e:  # noqa: BLE001 - the gate goes on; the container is collected by `tether sandbox gc`
        log.warning("could not close a gate sandbox: %s", e)


def fill(folder: Path, files: Path) -> None:
    """Move the copy at `files` into the warm side's `folder` (same file system: renames), give `folder` the
    copy's mode, and give every entry to the folder's owner where the sandbox's start lent it to another user."""
    src, dst = open_root(files), open_root(folder)
    try:
        for name in os.listdir(src):
            os.rename(name, name, src_dir_fd=src, dst_dir_fd=dst)
        owner = os.fstat(dst)
        os.fchmod(dst, stat.S_IMODE(os.fstat(src).st_mode))
    finally:
        os.close(src)
        os.close(dst)
    if os.geteuid() == 0 and owner.st_uid != 0:  # lent: its new entries go to the same user
        _chown_tree(folder, owner.st_uid, owner.st_gid)


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    stack = [open_root(root)]
    while stack:
        fd = stack.pop()
        try:
            with os.scandir(fd) as it:
                for entry in it:
                    os.chown(entry.name, uid, gid, dir_fd=fd, follow_symlinks=False)
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(os.open(entry.name, DIR_FLAGS, dir_fd=fd))
        finally:
            os.close(fd)
