"""A run's totals: the few numbers `tether runs` shows, computed once when the run stops.

The runner stores them in run.json under `totals` (so listing 1,000 runs reads
1,000 small files, never a journal); `totals_from_events()` recomputes them
from a journal for a run that has none yet (still running, or killed).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tether.common.events import Event, GateRecorded, RunEnded, RunStarted, StepChanged

TOTALS_KEY = "totals"


_STARTED: list[float] = []


def mark_process_start() -> None:
    """Called by the console entry point: the person's wait began when the process did, before any import."""
    _STARTED[:] = [_from_proc()]


def process_started_at() -> float:
    """When the person started waiting: the `tether` process's start (epoch seconds), else now (in-process use)."""
    import time

    return _STARTED[0] if _STARTED else time.time()


def _from_proc() -> float:
    import os
    import time

    try:
        with open("/proc/self/stat", "rb") as fh:
            ticks = int(fh.read().rsplit(b") ", 1)[1].split()[19])
        # The start is in clock ticks since boot: its age by the boot clock, taken from now by the wall clock
        # (/proc/stat's btime is whole seconds, and drifts from the wall clock: up to a second too early).
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
        return time.time() - max(0.0, age)
    except (OSError, ValueError, IndexError):
        return time.time()


def model_calls(values: dict[str, Any]) -> int:
    """Planner attempts + actor turns + replan rounds + the summarizer, from the graph state."""
    steps = values.get("steps") or {}
    turns = sum(int(s.get("turns") or 0) for s in steps.values())
    return (
        int(values.get("plan_attempts") or 0)
        + turns
        + int(values.get("replans") or 0)
        + (1 if values.get("summary") else 0)
    )


def gate_counts(results: list[dict[str, Any]]) -> dict[str, int]:
    """pass / fail / n/a counts of a gate's results (other statuses, e.g. needs-review, by name)."""
    counts = Counter(str(r.get("status")) for r in results)
    return {"pass": counts.pop("pass", 0), "fail": counts.pop("fail", 0), "n/a": counts.pop("n/a", 0), **counts}


def totals_from_events(events: list[Event], *, steps: list[dict[str, Any]] | None = None,
                       cost: dict[str, Any] | None = None, lesson_ids: list[str] | None = None) -> dict[str, Any]:
    """The totals of a run from its journal (and, at run end, the final step list and cost)."""
    starts = [e.ts for e in events if isinstance(e, RunStarted)]
    ends = [e.ts for e in events if isinstance(e, RunEnded)]
    ts = [e.ts for e in events]
    if steps is None:
        last: dict[str, str] = {}
        for e in events:
            if isinstance(e, StepChanged):
                last[e.step] = e.status
        steps = [{"id": k, "status": v} for k, v in last.items()]
    gates = [e for e in events if isinstance(e, GateRecorded)]
    gate = gates[-1] if gates else None
    return {
        "started_at": min(starts) if starts else (min(ts) if ts else None),
        "ended_at": max(ends) if ends else (max(ts) if ts else None),
        "steps_done": sum(s.get("status") == "done" for s in steps),
        "steps_total": len(steps),
        "gate": gate_counts(gate.results) if gate else None,
        "gate_passed": gate.passed if gate else None,
        "lessons_used": len(lesson_ids or []),
        "commands": sum(e.kind == "command" for e in events),
        **(cost or {}),
    }
