"""The log of host-side verdicts: one JSON line per hook call under Tether's home, bounded.

`hook-log.jsonl` holds the newest records; when it passes `MAX_BYTES` it is
renamed to `hook-log.1.jsonl` (the one older file kept) and a new one is
begun, so the two never hold more than twice `MAX_BYTES`. Writing is best
effort: a log that cannot be written never changes an answer.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tether.common.files import open_regular, read_bytes

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from typing import Any


MAX_BYTES = 4 << 20
NAME = "hook-log.jsonl"
OLD = "hook-log.1.jsonl"


def path(home: Path, name: str = NAME) -> Path:
    """The current log file of a Tether home."""
    return home / name


def _old(name: str) -> str:
    return name.removesuffix(".jsonl") + ".1.jsonl"


def append(home: Path, record: dict[str, Any], max_bytes: int = MAX_BYTES, name: str = NAME) -> None:
    """Add one record (one line, O_APPEND); rotate once past `max_bytes`. Errors are dropped."""
    line = json.dumps(record, default=str, ensure_ascii=True) + "\n"
    target = path(home, name)
    try:
        home.mkdir(parents=True, exist_ok=True)
        try:
            if target.stat().st_size + len(line) > max_bytes:
                os.replace(target, home / _old(name))
        except FileNotFoundError:
            pass
        fd = open_regular(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
    except OSError:
        return


def read(home: Path, limit: int = 50, name: str = NAME) -> list[dict[str, Any]]:
    """The newest `limit` records, oldest first (lines that are not JSON objects are skipped)."""
    rows: list[dict[str, Any]] = []
    for p in (home / _old(name), path(home, name)):
        try:
            lines = read_bytes(p, 2 * MAX_BYTES).decode("utf-8", "replace").splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                rows.append(obj)
    return rows[-limit:] if limit > 0 else rows
