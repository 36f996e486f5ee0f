"""`tether runs`: one line per run, from each run's run.json (never its whole journal).

Parts: `RunLine` (what a line shows), `parse_since()` (an ISO date/time or an
age such as `12h`), `list_runs()`. A run stopped by the runner has `totals`
in run.json; one that has none (still running, killed, made by an older
Tether) has them recomputed from its journal when that is small, else shown
as unknown. Lessons written come from memory.json (the memory cycle's report).
"""

from __future__ import annotations

import json
import re
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tether.common.errors import ConfigError
from tether.common.events import read_events
from tether.runtime.run.totals import TOTALS_KEY, totals_from_events

SMALL_JOURNAL = 1_000_000
"""A run without totals has them recomputed from a journal up to this many bytes."""
STATUSES = ("success", "self-verified", "failed", "blocked", "interrupted", "needs-review", "running", "damaged")
_AGE = re.compile(r"^(\d+(?:\.\d+)?)([smhdw])$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


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


def parse_since(text: str, now: float | None = None) -> float:
    """An epoch time from `2026-11-30`, `2026-11-30T08:00` or an age (`90m`, `12h`, `7d`)."""
    text = text.strip()
    m = _AGE.match(text)
    if m:
        return (now or time.time()) - float(m.group(1)) * _UNIT[m.group(2)]
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError as e:
        msg = f"--since {text!r} is neither a date (2026-11-30, 2026-11-30T08:00) nor an age (90m, 12h, 7d)"
        raise ConfigError(msg) from e


def _started_from_id(run_id: str) -> float | None:
    """Run ids begin with their start time (YYYYmmdd-HHMMSS-)."""
    try:
        return time.mktime(time.strptime(run_id[:15], "%Y%m%d-%H%M%S"))
    except ValueError:
        return None


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object file, or None when it is missing, unreadable or not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def run_line(folder: Path) -> RunLine:
    """The line of one run folder; a missing or unreadable run.json gives status `damaged`."""
    meta = read_json(folder / "run.json")
    if meta is None:
        return RunLine(run_id=folder.name, status="damaged", reason="run.json missing or unreadable",
                       started_at=_started_from_id(folder.name))
    totals = meta.get(TOTALS_KEY)
    journal = folder / "journal.jsonl"
    if not isinstance(totals, dict):
        try:
            small = journal.is_file() and journal.stat().st_size <= SMALL_JOURNAL
        except OSError:
            small = False
        totals = totals_from_events(read_events(journal), lesson_ids=meta.get("lesson_ids")) if small else {}
    memory = read_json(folder / "memory.json") or {}
    started = meta.get("started_at") or totals.get("started_at") or _started_from_id(folder.name)
    ended = totals.get("ended_at")
    status = str(meta.get("status") or "running")
    wait = totals.get("wait_s")
    return RunLine(
        run_id=str(meta.get("run_id") or folder.name), goal=str(meta.get("goal") or ""), status=status,
        reason=str(meta.get("reason") or ""), started_at=started,
        duration_s=None if status == "running" else wait if isinstance(wait, int | float) else
        (ended - started) if started and ended else None,
        steps_done=totals.get("steps_done"), steps_total=totals.get("steps_total"), gate=totals.get("gate"),
        gate_passed=totals.get("gate_passed"), lessons_used=len(meta.get("lesson_ids") or []),
        lessons_written=len(memory["lessons_written"]) if isinstance(memory.get("lessons_written"), list) else None,
        shadow=bool(meta.get("shadow")),
    )


def list_runs(
    runs_dir: Path, *, status: str | None = None, since: float | None = None, limit: int | None = None
) -> list[RunLine]:
    """Runs under `runs_dir`, newest first, filtered by status and start time."""
    if status is not None and status not in STATUSES:
        msg = f"--status {status!r} is not a run status; use one of: {', '.join(STATUSES)}"
        raise ConfigError(msg)
    if not runs_dir.is_dir():
        return []
    folders = [p for p in runs_dir.iterdir() if p.is_dir() and not p.name.startswith(".")]
    if since is not None:  # cheap pre-filter on the id's timestamp (a day of slack for time zones)
        folders = [p for p in folders if (_started_from_id(p.name) or since) >= since - 86400]
    folders.sort(key=lambda p: p.name, reverse=True)
    lines: list[RunLine] = []
    for folder in folders:
        line = run_line(folder)
        if status is not None and line.status != status:
            continue
        if since is not None and (line.started_at or 0) < since:
            continue
        lines.append(line)
        if limit is not None and len(lines) >= limit:
            break
    lines.sort(key=lambda r: (r.started_at or 0, r.run_id), reverse=True)
    return lines
