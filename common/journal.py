"""The run journal: every event of a run, one JSON line each, durable before it matters.

Parts: `Journal` (append-only writer that skips events whose `key` it has
already written, so a node re-run after a crash does not duplicate them, and
that indexes command results so a resumed run reuses them instead of
re-executing). The event types and `read_events()` are in common.events.

The gate, the reports and the memory read this file; it is the run's
evidence, so it is written before the graph moves on.

Durability: every event is written and flushed to the OS at once (a killed
process loses nothing, and readers see it). Events of `SYNC_KINDS` (an
approval, a command about to run, a command's result, the end of the run)
are also fdatasynced at once, so a result is on disk before the next
command runs. Other events are fdatasynced by the next `sync()`, which the
runner calls before every checkpoint write (runs resume from checkpoints,
so an event is on disk before the checkpoint of the node that wrote it),
or by the next synced event: the file is append-only, so one fdatasync
covers every line before it. Events that never reached the disk were
written by a node whose checkpoint did not either, so the re-run node
writes them again.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from tether.common.errors import StateFileError
from tether.common.events import Event, ExecFinished, read_events


def _torn(path: Path) -> bool:
    """The file ends inside a line (a write cut short by a crash)."""
    with path.open("rb") as fh:
        if fh.seek(0, os.SEEK_END) == 0:
            return False
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) != b"\n"


SYNC_KINDS = frozenset({"approval", "exec_start", "exec", "run_end"})
"""Event kinds fdatasynced as soon as they are written (see the module docstring): an
approval before the trust hooks record it, a command's start before it runs (with every
event before it), its result before anything else runs, and the end of the run."""


class Journal:
    """Append-only JSON-lines journal with idempotent appends."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.events: list[Event] = read_events(path)
        self._keys: dict[str, Event] = {e.key: e for e in self.events}
        self._results = {e.cmd_id: e for e in self.events if isinstance(e, ExecFinished)}
        self.listeners: list[Callable[[Event], None]] = []
        """Called after each new event (the live view subscribes here)."""
        self._fh: TextIO | None = None
        self._dirty = False
        """Lines written since the last fdatasync."""
        self._lock = threading.Lock()
        """The checkpointer calls `sync()` from its own thread."""

    def close(self) -> None:
        """Sync and close the file; a later append opens it again."""
        with self._lock:
            if self._fh is not None:
                try:
                    self._sync_locked()
                finally:
                    self._drop_handle()

    def _drop_handle(self) -> None:
        fh, self._fh = self._fh, None
        if fh is not None:
            try:
                fh.close()
            except OSError:
                pass  # its buffered tail is lost with the failed write

    def sync(self) -> None:
        """fdatasync every line written so far (a no-op when nothing is pending)."""
        with self._lock:
            self._sync_locked()

    def _sync_locked(self) -> None:
        if self._dirty and self._fh is not None:
            try:
                os.fdatasync(self._fh.fileno())
            except OSError as e:
                raise self._error(e) from e
            self._dirty = False

    def _error(self, e: OSError) -> StateFileError:
        return StateFileError(f"cannot write the run journal {self.path}: {e.strerror or e}; "
                              "free some space (or make the home writable), then `tether resume` the run")

    def append(self, event: Event, *, sync: bool | None = None) -> bool:
        """Write and flush `event` unless its key was written; True when written.

        fdatasynced at once when `sync` is true, or by default for `SYNC_KINDS`;
        otherwise by the next `sync()` or synced event.
        """
        if event.key in self._keys:
            return False
        line = event.model_dump_json()
        with self._lock:
            try:
                if self._fh is None:
                    self._fh = self.path.open("a", encoding="utf-8")
                    if _torn(self.path):  # a crash mid-line: start on a line of our own, or this event is lost
                        self._fh.write("\n")
                self._fh.write(line + "\n")
                self._fh.flush()
            except OSError as e:
                self._drop_handle()  # a partly written line is ended by the next append (`_torn`)
                raise self._error(e) from e
            self._dirty = True
            if sync or (sync is None and event.kind in SYNC_KINDS):
                self._sync_locked()
        self._keys[event.key] = event
        self.events.append(event)
        if isinstance(event, ExecFinished):
            self._results[event.cmd_id] = event
        for listener in self.listeners:
            listener(event)
        return True

    def result(self, cmd_id: str) -> ExecFinished | None:
        """The journaled result of a command, if it already ran to completion."""
        return self._results.get(cmd_id)

    def has(self, key: str) -> bool:
        return key in self._keys

    def get(self, key: str) -> Event | None:
        """The event written under `key` (by this process or an earlier one), if any."""
        return self._keys.get(key)
