"""Time the garbage collector spends in each thread, so a check's time budget counts the check's own work only.

A collection runs in the thread whose allocation crosses a threshold, and it runs the finalisers of what it
frees. In a long-lived process (a test session, an eval's cells, the hook server) a collection of an earlier
caller's garbage (a big heap walked, a temporary tree removed by its finaliser, a client closed) can land
inside one check and spend its budget, turning an ordinary line into a GUARD-FAIL deny that the same line does
not get a moment later (issue 19: `echo x > passwd` in the workspace, denied once in a full test run).
`analyse.Deadline` leaves this time out. The collector's cost for the check's own allocations is a bounded
fraction of the allocating work, which the budget still counts.

Parts:
    spent(): (CPU seconds, wall seconds) the collector has spent in the calling thread so far.
"""

from __future__ import annotations

import _thread
import gc
import time

_local = _thread._local()  # noqa: SLF001 - threading.local without importing threading (the hook's start-up)


def _on_gc(phase: str, _info: dict[str, int]) -> None:
    try:
        if phase == "start":
            _local.start = (time.thread_time(), time.perf_counter())
            return
        start = getattr(_local, "start", None)
        if start is None:
            return
        _local.start = None
        cpu, wall = getattr(_local, "total", (0.0, 0.0))
        _local.total = (cpu + time.thread_time() - start[0], wall + time.perf_counter() - start[1])
    except Exception:  # noqa: BLE001, S110 - interpreter shutdown: nothing to count any more
        pass


def spent() -> tuple[float, float]:
    """CPU and wall seconds spent collecting in this thread since this module was imported."""
    return getattr(_local, "total", (0.0, 0.0))


if not any(getattr(cb, "__qualname__", "") == "_on_gc" and getattr(cb, "__module__", "") == __name__
           for cb in gc.callbacks):
    gc.callbacks.append(_on_gc)
