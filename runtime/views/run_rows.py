"""The rows of `tether runs` as plain dicts, with the standard library only.

Why apart from run_list.py: `tether runs` is started by a person who waits
for it; pydantic and the event models cost more to import than the listing
itself. `row()` reads run.json (and memory.json) only; a run without totals
(still running, killed, made by an older Tether) has them recomputed from a
small journal, which alone imports the event models. run_list.RunLine is the
same row, validated; its fields are ROW_KEYS, in that order.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from tether.common.errors import ConfigError

TYPE_CHECKING = False  # not typing's: importing typing costs a tenth of this command's start-up
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

SMALL_JOURNAL = 1_000_000
"""A run without totals has them recomputed from a journal up to this many bytes."""
STATUSES = ("success", "self-verified", "failed", "blocked", "interrupted", "needs-review", "running", "damaged")
TOTALS_KEY = "totals"
"""Where run.json holds the totals the runner computed (runtime.run.totals.TOTALS_KEY)."""
ROW_KEYS = ("run_id", "goal", "status", "reason", "started_at", "duration_s", "steps_done", "steps_total", "gate",
            "gate_passed", "lessons_used", "lessons_written", "shadow")
_AGE = re.compile(r"^(\d+(?:\.\d+)?)([smhdw])$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(text: str, now: float | None = None) -> float:
    """An epoch time from `2026-11-30`, `2026-11-30T08:00` or an age (`90m`, `12h`, `7d`)."""
    from datetime import datetime

    text = text.strip()
    m = _AGE.match(text)
    if m:
        return (now or time.time()) - float(m.group(1)) * _UNIT[m.group(2)]
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError as e:
        msg = f"--since {text!r} is neither a date (2026-11-30, 2026-11-30T08:00) nor an age (90m, 12h, 7d)"
        raise ConfigError(msg) from e


def started_from_id(run_id: str) -> float | None:
    """Run ids begin with their start time (YYYYmmdd-HHMMSS-)."""
    try:
        return time.mktime(time.strptime(run_id[:15], "%Y%m%d-%H%M%S"))
    except ValueError:
        return None


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object file, or None when it is missing, unreadable or not an object."""
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _time(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value == value else None


def _totals(folder: Path, meta: dict[str, Any], before_journal: Callable[[], object] | None) -> dict[str, Any]:
    totals = meta.get(TOTALS_KEY)
    if isinstance(totals, dict):
        return totals
    journal = folder / "journal.jsonl"
    try:
        small = journal.is_file() and journal.stat().st_size <= SMALL_JOURNAL
    except OSError:
        small = False
    if not small:
        return {}
    if before_journal is not None:
        before_journal()
    from tether.common.events import read_events
    from tether.runtime.run.totals import totals_from_events

    lessons = meta.get("lesson_ids")
    return totals_from_events(read_events(journal), lesson_ids=lessons if isinstance(lessons, list) else None)


def row(folder: Path, before_journal: Callable[[], object] | None = None) -> dict[str, Any]:
    """The row of one run folder (keys ROW_KEYS); a missing or unreadable run.json gives status `damaged`.

    `before_journal` is called before a journal is read (its events may log a warning)."""
    meta = read_json(folder / "run.json")
    if meta is None:
        return dict(zip(ROW_KEYS, (folder.name, "", "damaged", "run.json missing or unreadable",
                                   started_from_id(folder.name), None, None, None, None, None, None, None, False),
                        strict=True))
    totals = _totals(folder, meta, before_journal)
    memory = read_json(folder / "memory.json") or {}
    started = _time(meta.get("started_at")) or _time(totals.get("started_at")) or started_from_id(folder.name)
    ended = _time(totals.get("ended_at"))
    status = str(meta.get("status") or "running")
    wait = _time(totals.get("wait_s"))
    gate = totals.get("gate")
    lessons = meta.get("lesson_ids")
    written = memory.get("lessons_written")
    return {
        "run_id": str(meta.get("run_id") or folder.name), "goal": str(meta.get("goal") or ""), "status": status,
        "reason": str(meta.get("reason") or ""), "started_at": started,
        "duration_s": None if status == "running" else wait if wait is not None else
        (ended - started) if started and ended else None,
        "steps_done": _count(totals.get("steps_done")), "steps_total": _count(totals.get("steps_total")),
        "gate": {str(k): v for k, v in gate.items() if _count(v) is not None} if isinstance(gate, dict) else None,
        "gate_passed": totals.get("gate_passed") if isinstance(totals.get("gate_passed"), bool) else None,
        "lessons_used": len(lessons) if isinstance(lessons, list) else 0,
        "lessons_written": len(written) if isinstance(written, list) else None,
        "shadow": bool(meta.get("shadow")),
    }


def rows(runs_dir: Path, *, status: str | None = None, since: float | None = None, limit: int | None = None,
         before_journal: Callable[[], object] | None = None) -> list[dict[str, Any]]:
    """Rows of the runs under `runs_dir`, newest first, filtered by status and start time."""
    if status is not None and status not in STATUSES:
        msg = f"--status {status!r} is not a run status; use one of: {', '.join(STATUSES)}"
        raise ConfigError(msg)
    if not runs_dir.is_dir():
        return []
    folders = [p for p in runs_dir.iterdir() if p.is_dir() and not p.name.startswith(".")]
    if since is not None:  # cheap pre-filter on the id's timestamp (a day of slack for time zones)
        folders = [p for p in folders if (started_from_id(p.name) or since) >= since - 86400]
    folders.sort(key=lambda p: p.name, reverse=True)
    found: list[dict[str, Any]] = []
    for folder in folders:
        line = row(folder, before_journal)
        if status is not None and line["status"] != status:
            continue
        if since is not None and (line["started_at"] or 0) < since:
            continue
        found.append(line)
        if limit is not None and len(found) >= limit:
            break
    found.sort(key=lambda r: (r["started_at"] or 0, r["run_id"]), reverse=True)
    return found
