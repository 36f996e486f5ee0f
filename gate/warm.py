"""The gate's two fresh sandboxes, started while the run works and handed to the gate when it begins.

Why: starting two sandboxes took most of the gate's time. `start()` (called
as the run's own sandbox starts, so they are up however soon the model
finishes) starts them in the background; the gate takes them with
`before_side()` and `after_side()` (the after side with its processes
listed at its start, before anything ran in it: R15's baseline); sides it is
done with are removed once it ends (`release()`), and `close()` removes
whatever is left on every exit path, waiting for a start under way.
`scan()` runs R14's scan of the start files meanwhile (gate.known).

The safety of a fresh side is kept:
- new containers on scratch folders in the run folder, never the run's
  container, nothing of theirs mounted in it; a run folder inside the
  workspace (where the run's container could write) gets no warm sides;
- the pre-run copy is built from the snapshot, and its stat signature
  (gate.warm_folders) taken once the sandbox holds it: a copy that changed
  by hand-over time is thrown away with its sandbox and built afresh;
- the after side starts on a pre-run copy too (an empty folder where there
  is no snapshot), signature checked the same way; at hand-over the gate
  writes into it what the final workspace holds differently (gate.after_sync:
  bytes compared, nothing trusted) or fills the empty one; a folder no longer
  the one it started on is not used.
Any failure falls back to the cold path (a sandbox started there and then).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tether.common.snapshot import SNAPSHOT_DIR
from tether.common.walk import remove_path
from tether.gate.after_sync import sync
from tether.gate.collect import list_processes
from tether.gate.copies import build_after, build_before
from tether.gate.known import KnownCache, scan_known
from tether.gate.warm_folders import Signature, fill, inside, signature
from tether.gate.warm_side import HandedSide
from tether.sandbox.base import Sandbox
from tether.sandbox.processes import Proc

log = logging.getLogger(__name__)

WARM_BEFORE_DIR = "gate-before-warm"
"""The pre-run copy the warm before side starts on."""
WARM_AFTER_DIR = "gate-after-warm"
"""The folder the warm after side starts on: a pre-run copy (or empty), made the final workspace at hand-over."""


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
        self._released = False
        """The gate ended (or the run closes): sides it is done with are removed at once."""
        self._retiring: list[Callable[[], None]] = []
        """Removals of sides the gate was done with while it still worked (started by `release()`)."""
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
                    or inside(self.run_dir, self.workspace):
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
            with contextlib.suppress(BaseException):  # a worker's KeyboardInterrupt is a failed start, not Ctrl-C
                starting.result()

    def _start_before(self) -> tuple[Sandbox, Signature | None]:
        folder = self.before_dir
        if folder.exists():
            remove_path(folder)
        os.rename(build_before(self.run_dir, self.workspace, []), folder)  # from the snapshot, as at the gate
        box = self._start_box(folder)
        return box, signature(folder)  # taken after the start: the sandbox's hand-over changed owners

    def _start_after(self) -> tuple[Sandbox, Signature | None, list[Proc] | None, bool]:
        folder = self.after_dir
        if folder.exists():
            remove_path(folder)
        prefilled = (self.run_dir / SNAPSHOT_DIR / "manifest.json").is_file()
        if prefilled:  # the pre-run copy: the gate writes only what the run changed (gate.after_sync)
            build_before(self.run_dir, self.workspace, [], name=WARM_AFTER_DIR)
        else:
            folder.mkdir(mode=0o700)
        box = self._start_box(folder)
        try:  # its processes now, before anything runs in it: R15's baseline for the gate's re-run (one exec less)
            procs = list_processes(box)
        except BaseException:
            _close(box)
            raise
        return box, signature(folder), procs, prefilled  # taken after the start (its hand-over changed owners)

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
                return HandedSide(self._start_before()[0], self.retire, folder)
            if sig is None or signature(folder) != sig:
                log.warning("the gate's pre-run copy changed while the run worked; building it again")
                _close(box)
                box, _ = self._start_before()  # afresh from the snapshot, on the same folder
            else:
                self.used.append("before")
            return HandedSide(box, self.retire, folder)

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
            box, sig, procs, prefilled = starting.result()  # a failed start is the gate's sandbox failure
            try:
                if sig is None or signature(folder) != sig:
                    msg = f"{folder} changed while the run worked"
                    raise OSError(msg)
                if prefilled:
                    sync(folder, workspace)
                else:
                    fill(folder, build_after(self.run_dir, workspace))
            except BaseException:
                _close(box)
                raise
            self.used.append("after")
            return HandedSide(box, self.retire, folder, procs)

        return take, folder

    def retire(self, box: Sandbox, folder: Path | None) -> None:
        """Remove `box`, then its scratch folder, in the background (joined by `close()`); a side the gate is done
        with before the gate ends waits for `release()`, so its removal never slows the side still at work."""
        def work() -> None:
            _close(box)
            if folder is not None:
                with contextlib.suppress(OSError):
                    remove_path(folder)
        with self._lock:
            if not self._released:
                self._retiring.append(work)
                return
        self._submit(work)

    def _submit(self, work: Callable[[], None]) -> None:
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
        """Retire the sides the gate did not take and those it is done with, without waiting (the gate's end)."""
        with self._lock:
            self._done = self._released = True
            pending = [(self._before, self.before_dir), (self._after, self.after_dir)]
            self._before = self._after = None
            retiring, self._retiring = self._retiring, []
        for work in retiring:
            self._submit(work)
        for starting, folder in pending:
            if starting is not None:
                starting.add_done_callback(lambda f, d=folder: self._retire_started(f, d))

    def _retire_started(self, starting: Future[Any], folder: Path) -> None:
        try:
            box = starting.result()[0]
        except BaseException:  # noqa: BLE001 - it never started (signals reach only the main thread)
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


def _close(box: Sandbox) -> None:
    try:
        box.close()
    except Exception as e:  # noqa: BLE001 - the gate goes on; the container is collected by `tether sandbox gc`
        log.warning("could not close a gate sandbox: %s", e)
