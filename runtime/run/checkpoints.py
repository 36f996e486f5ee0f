"""The checkpoint database runs resume from, kept usable when its file is not.

Parts: `connect()` (WAL mode; a file that is not a readable SQLite database
is moved aside, named in a warning, and a fresh one is started so new runs
go on), `quarantine()`, `saved_values()` (a run's last checkpointed state,
read without building the graph) and `JournalFirstSaver`.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from tether.common.errors import StateFileError
from tether.common.journal import Journal

log = logging.getLogger(__name__)
SIDE_FILES = ("-wal", "-shm", "-journal")


def _open(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), check_same_thread=False)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        for table in {"checkpoints", "writes"} & names:
            conn.execute(f"SELECT count(*) FROM {table}").fetchone()  # noqa: S608 (fixed names)
    except BaseException:
        conn.close()
        raise
    return conn


def quarantine(path: Path, why: str) -> Path:
    """Move a broken database (and its WAL/SHM files) aside; returns where it went."""
    aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
    for suffix in ("", *SIDE_FILES):
        src = Path(str(path) + suffix)
        if src.exists():
            src.replace(Path(str(aside) + suffix))
    log.warning("checkpoint database %s is unreadable (%s); moved it aside to %s and started a fresh one "
                "(runs it held resume with `tether resume RUN --from-journal`)", path, why, aside)
    return aside


def connect(path: Path) -> sqlite3.Connection:
    """The checkpoint database in WAL mode: a commit survives a killed process without an fsync each.

    Raises:
        StateFileError: the home is not writable or the disk is full.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            return _open(path)
        except sqlite3.DatabaseError as e:
            if isinstance(e, sqlite3.OperationalError) and not _corrupt_message(str(e)):
                raise
            quarantine(path, str(e))
            return _open(path)
    except (sqlite3.OperationalError, OSError) as e:
        msg = f"cannot open the checkpoint database {path}: {e}; check that the home is writable and has free space"
        raise StateFileError(msg) from e


def _corrupt_message(text: str) -> bool:
    return any(s in text for s in ("malformed", "not a database", "file is encrypted", "corrupt"))


def saved_values(conn: sqlite3.Connection, run_id: str) -> dict[str, Any] | None:
    """The run's last checkpointed state, or None when it has no checkpoint."""
    found = SqliteSaver(conn).get_tuple({"configurable": {"thread_id": run_id}})
    return None if found is None else dict(found.checkpoint.get("channel_values") or {})


class JournalFirstSaver(SqliteSaver):
    """A SqliteSaver that fdatasyncs the journal before saving anything.

    The journal flushes most events without an fsync each (common.journal);
    this keeps the order a resume relies on: whatever a node journaled is on
    disk before the checkpoint (or pending writes) that marks the node done.
    """

    def __init__(self, conn: sqlite3.Connection, journal: Journal) -> None:
        super().__init__(conn)
        self.journal = journal

    def put(self, *args: Any, **kwargs: Any) -> Any:
        self.journal.sync()
        return super().put(*args, **kwargs)

    def put_writes(self, *args: Any, **kwargs: Any) -> None:
        self.journal.sync()
        super().put_writes(*args, **kwargs)
