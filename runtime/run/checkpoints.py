"""The checkpoint database runs resume from, kept usable when its file is not.

Parts: `connect()` (WAL mode; a file that is not a readable SQLite database
is moved aside, named in a warning, and a fresh one is started so new runs
go on), `quarantine()`, `saved_values()` (a run's last checkpointed state,
read without building the graph), `prune_finished()` (a finished run keeps
only its last checkpoint), `compact()` (give freed pages back to the disk)
and `JournalFirstSaver`.

A finished run needs one checkpoint: `tether resume` of a run whose graph
ended reads only its last state (`status`, steps, gate, summary) to report it
and finish an after-run phase cut short; `tether show` and `report` read
run.json and the journal, never the database. The earlier checkpoints and
the pending writes (about 260 KB a run) only serve a run still going.
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
        conn.execute("PRAGMA auto_vacuum=INCREMENTAL")  # takes effect in a new file (or after VACUUM)
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


def _thread_bytes(conn: sqlite3.Connection, run_id: str) -> int:
    row = conn.execute(
        "SELECT coalesce(sum(length(checkpoint) + length(metadata)), 0) FROM checkpoints WHERE thread_id = ?",
        (run_id,)).fetchone()
    writes = conn.execute("SELECT coalesce(sum(length(value)), 0) FROM writes WHERE thread_id = ?",
                          (run_id,)).fetchone()
    return int(row[0]) + int(writes[0])


def prunable(conn: sqlite3.Connection, run_id: str) -> int:
    """Bytes `prune_finished` would free for the run (0 when its graph has not ended or nothing is left)."""
    values = saved_values(conn, run_id)
    if not values or not values.get("status"):
        return 0
    return _thread_bytes(conn, run_id) - _thread_bytes_kept(conn, run_id)


def _last_ids(conn: sqlite3.Connection, run_id: str) -> list[tuple[str, str]]:
    """(namespace, checkpoint id) of the newest checkpoint in each namespace of the run's thread."""
    return [(ns, cid) for ns, cid in conn.execute(
        "SELECT checkpoint_ns, max(checkpoint_id) FROM checkpoints WHERE thread_id = ? GROUP BY checkpoint_ns",
        (run_id,))]


def _thread_bytes_kept(conn: sqlite3.Connection, run_id: str) -> int:
    total = 0
    for ns, cid in _last_ids(conn, run_id):
        row = conn.execute("SELECT length(checkpoint) + length(metadata) FROM checkpoints WHERE thread_id = ? AND "
                           "checkpoint_ns = ? AND checkpoint_id = ?", (run_id, ns, cid)).fetchone()
        total += int(row[0] or 0)
    return total


def prune_finished(conn: sqlite3.Connection, run_id: str) -> int:
    """Keep only the last checkpoint of a run whose graph ended (its state has a `status`); bytes freed.

    The last checkpoint stays with its parent link cut, so `tether resume`
    still reports the run; every earlier checkpoint and every pending write
    of the thread goes. A run whose graph has not ended is left alone (0).
    """
    freed = prunable(conn, run_id)
    if not freed:
        return 0
    with conn:
        for ns, cid in _last_ids(conn, run_id):
            conn.execute("DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id != ?",
                         (run_id, ns, cid))
            conn.execute("UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE thread_id = ? AND "
                         "checkpoint_ns = ?", (run_id, ns))
        conn.execute("DELETE FROM writes WHERE thread_id = ?", (run_id,))
    return freed


def compact(conn: sqlite3.Connection, *, full: bool = False) -> None:
    """Give freed pages back to the disk: incremental vacuum, or a full VACUUM (`tether gc`).

    A full VACUUM also turns a database made before incremental vacuum was
    on into one that has it. It needs no other writer at the moment; a busy
    database is left as it is (the pages are reused by later runs).
    """
    try:
        if full:
            conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
            conn.execute("VACUUM")
        else:
            conn.execute("PRAGMA incremental_vacuum").fetchall()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.OperationalError as e:
        log.warning("checkpoint database not compacted now (%s); its free pages are reused", e)


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
