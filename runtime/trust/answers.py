"""A person's answers recorded by the per-call hook, for the trust ledger to count on its next load.

The hook learns an answer (an approval from the agent's post-tool event, a refusal from the next
payload) inside a call the agent waits for; loading the pydantic ledger and Tether's config there costs
about a second. So the hook appends the answer here (`trust-journal.jsonl` in Tether's home, one JSON
line per kind: kind, approved, at (Unix seconds), agent) and the ledger folds the journal in whenever it is loaded
(`TrustLedger.load`: `tether trust`, a rollback, a run, the hook's own check of a promotion), counting
each entry exactly as `TrustLedger.record(kind, approved, source="person")` would have, in order.

Parts:
    append(home, rows): add answers (under the journal's lock, one write); False when the journal is
        over MAX_BYTES or cannot be written (the caller then records through the ledger itself).
    mentions(home, kinds): whether the journal may hold an answer for one of these kinds (a byte search:
        True sends the caller to the full ledger, which is always right).
    take(home): under the journal's lock, the valid rows and a function that empties the journal; the
        ledger calls it while holding its own lock (ledger lock first, journal lock second; the hook
        takes only the journal lock, so they cannot deadlock).

Stdlib only, no typing: the hook imports this module on every call that learns.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path

from tether.common.files import open_regular, read_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

JOURNAL = "trust-journal.jsonl"
MAX_BYTES = 4 << 20
"""A journal this large is not appended to: the answer goes straight to the ledger (which folds the journal)."""


@contextlib.contextmanager
def _locked(home: Path) -> Iterator[None]:
    home.mkdir(parents=True, exist_ok=True)
    fd = open_regular(home / (JOURNAL + ".lock"), os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def append(home: Path, rows: list[dict[str, Any]]) -> bool:
    """Add the answers; False when the journal is full or cannot be written (record through the ledger)."""
    data = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows).encode()
    try:
        with _locked(home):
            fd = open_regular(home / JOURNAL, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            try:
                if os.fstat(fd).st_size + len(data) > MAX_BYTES:
                    return False
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
    except OSError:
        return False
    return True


def mentions(home: Path, kinds: list[str]) -> bool:
    """Whether the journal may hold an answer for one of `kinds` (True is always safe: the ledger decides)."""
    try:
        raw = read_bytes(home / JOURNAL, MAX_BYTES + 1)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return any(json.dumps(k).encode() in raw for k in kinds)


def _valid(row: object) -> bool:
    return (isinstance(row, dict) and isinstance(row.get("kind"), str) and row["kind"].count(":") >= 1
            and isinstance(row.get("approved"), bool) and isinstance(row.get("at"), (int, float))
            and not isinstance(row.get("at"), bool))


@contextlib.contextmanager
def take(home: Path) -> Iterator[tuple[list[dict[str, Any]], Callable[[], None]]]:
    """The journal's valid rows, in order, and `clear` (empties it); the journal stays locked meanwhile."""
    with _locked(home):
        try:
            raw = read_bytes(home / JOURNAL, 4 * MAX_BYTES)
        except FileNotFoundError:
            raw = b""
        rows = []
        for line in raw.decode("utf-8", "replace").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue  # a torn last line (a crash mid-write): never counted
            if _valid(row):
                rows.append(row)

        def clear() -> None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(home / JOURNAL)

        yield rows, clear
