"""`tether runs`: one line per run, from each run's run.json (never its whole journal).

Parts: `RunLine` (what a line shows), `parse_since()` (an ISO date/time or an
age such as `12h`), `list_runs()`. A run stopped by the runner has `totals`
in run.json; one that has none (still running, killed, made by an older
Tether) has them recomputed from its journal when that is small, else shown
as unknown. Lessons written come from memory.json (the memory cycle's report).
The reading itself is runtime.views.run_rows (standard library only, for the
fast `tether runs`); this module gives its rows a validated shape.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from tether.runtime.views.run_rows import ROW_KEYS, SMALL_JOURNAL, STATUSES, parse_since, read_json, row, rows

__all__ = ["SMALL_JOURNAL", "STATUSES", "RunLine", "list_runs", "parse_since", "read_json", "run_line"]


class RunLine(BaseModel):
    """One run as `tether runs` lists it."""

    run_id: str
    goal: str = ""
    status: str
    reason: str = ""
    started_at: float | None = None
    duration_s: float | None = None
    """The person's whole wait: from each `tether run`/`resume` process's start to the end of that attempt, added up
    (a pause waiting for `tether approve` is not counted); older runs: first event to last."""
    steps_done: int | None = None
    steps_total: int | None = None
    gate: dict[str, int] | None = None
    """pass / fail / n/a counts; None when the gate did not run."""
    gate_passed: bool | None = None
    lessons_used: int | None = None
    lessons_written: int | None = None
    shadow: bool = False


assert tuple(RunLine.model_fields) == ROW_KEYS, "run_rows.ROW_KEYS must list RunLine's fields in order"


def run_line(folder: Path) -> RunLine:
    """The line of one run folder; a missing or unreadable run.json gives status `damaged`."""
    return RunLine(**row(folder))


def list_runs(
    runs_dir: Path, *, status: str | None = None, since: float | None = None, limit: int | None = None
) -> list[RunLine]:
    """Runs under `runs_dir`, newest first, filtered by status and start time."""
    return [RunLine(**r) for r in rows(runs_dir, status=status, since=since, limit=limit)]
