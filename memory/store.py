"""The memory folder: markdown files (the truth), MEMORY.md, and the index kept in step.

Parts: `MemoryStore` — paths, the root file lock, `session()` (lock + index
open, repairing a missing, corrupt or stale index by rebuilding it from
markdown, then writing a person's MEMORY.md edits into their files — see
`memory.edits`), load/save/delete of lessons, rules and runs, `search` (index
hits filtered by what MEMORY.md lists), `rebuild`, and MEMORY.md upkeep
(`relist`, the record of the lines the store wrote).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, TypeVar

from filelock import FileLock
from pydantic import ValidationError

from tether.common.atomic import write_atomic
from tether.common.errors import StateFileError
from tether.memory.config import MemoryConfig
from tether.memory.edits import apply_line_edits, line_digest, read_record, refresh_confidences, write_record
from tether.memory.errors import IndexUnavailableError, MemoryStoreError, UnknownMemoryItemError
from tether.memory.files import join_front_matter, read_front_matter, read_text
from tether.memory.index import IndexDoc, IndexHit, Kind, LessonIndex, make_index
from tether.memory.lesson import (
    HISTORY_DIR,
    Lesson,
    archive_markdown,
    compact_history,
    lesson_from_markdown,
    lesson_to_markdown,
)
from tether.memory.manifest import Manifest, lesson_line, read_manifest, render_manifest, rule_line
from tether.memory.rule import Rule, current_confidence, rule_from_markdown, rule_to_markdown
from tether.memory.run import RunMeta, RunRecord, Turn, parse_turns, render_trajectory, trajectory_jsonl
from tether.memory.watch import FolderWatch

log = logging.getLogger(__name__)
STATE_VERSION = 2
KEEP_OPEN_S = 0.5
RELOAD_AFTER = 12
"""Writing sessions after which the open index is closed (and loaded afresh by the next session).

Measured with Qdrant Edge: searches slow down with the updates made through one loaded shard (after
250 runs' worth in one process a search took ~7 ms, ~1 ms once reloaded), while a load rebuilds its
in-memory index from the stored points; so a long-lived process reloads it now and then."""
"""How long the index stays open after a session: long enough for a burst of sessions, short enough
that another process waiting for the engine (which one process at a time may load) is not kept long."""
GITIGNORE = """# Written by tether: everything here but markdown is derived or local state.
# The index is rebuilt from the markdown (`tether memory rebuild`); the raw turns
# are read back from trajectory.md when trajectory.jsonl is missing.
.index/
.lock
.memory-lines.json
*.jsonl
*.tmp
"""


class MemoryStore:
    """Reads and writes one memory root; every write happens inside `session()`."""

    def __init__(self, root: Path, config: MemoryConfig, index: LessonIndex | None = None,
                 clock: Callable[[], datetime] | None = None) -> None:
        self.root = Path(root)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            msg = (
                f"cannot use the memory folder {self.root}: {e.strerror or e}; check that the home is a writable "
                "folder with free space"
            )
            raise MemoryStoreError(msg) from e
        self.config = config
        self._write_gitignore()
        self.clock = clock or (lambda: datetime.now(UTC))
        """Dates a person's MEMORY.md edit in the lesson's history."""
        self.edits_checked: object = None
        """Stamps of MEMORY.md and the line record when `apply_line_edits` last found nothing pending."""
        self.index = index if index is not None else make_index(self.root, config)
        self._lock = FileLock(str(self.root / ".lock"), timeout=600)
        self._depth = 0
        self._manifest_cache: tuple[tuple[int, int, int], Manifest] | None = None
        self.rebuilt = False
        """Whether the last session had to rebuild the index."""
        self._guard = threading.RLock()
        """Guards the session depth and the index's open/close against the idle-release timer."""
        self._releaser: threading.Thread | None = None
        self._deadline = 0.0
        """When (time.monotonic) the idle index is released."""
        self._seen: dict[str, object] | None = None
        """state.json as this process last read or wrote it while the index stayed open; None once closed."""
        self._files = ""
        self._engine = ""
        """`_engine_files()` when the last session left the index open."""
        self._engine_paths: list[str] = []
        self._dirty_engine = True
        """Whether the engine may have added or removed files since `_engine_paths` was listed."""
        self._dirty = False
        """Whether this session wrote markdown or the index (then its end records a new state)."""
        self._writes = 0
        """Sessions that wrote since the index was loaded (see RELOAD_AFTER)."""
        self._watch: FolderWatch | None = None
        self._watch_ok = True
        weakref.finalize(self, _shut, self.index, self._guard)

    def _write_gitignore(self) -> None:
        """Ship a `.gitignore` for what is derived, so the folder can be a git repository of markdown."""
        path = self.root / ".gitignore"
        if path.exists():
            return  # a person's own, or ours already
        try:
            write_atomic(path, GITIGNORE)
        except (OSError, StateFileError) as e:  # a read-only or full folder: the session says what is wrong
            log.debug("no .gitignore written: %s", e)

    lessons_dir = property(lambda self: self.root / "lessons")
    rules_dir = property(lambda self: self.root / "rules")
    runs_dir = property(lambda self: self.root / "runs")
    manifest_path = property(lambda self: self.root / "MEMORY.md")
    lines_path = property(lambda self: self.root / ".memory-lines.json")
    state_path = property(lambda self: self.root / ".index" / "state.json")

    # -- session: lock + index -------------------------------------------------
    @contextmanager
    def session(self) -> Iterator[MemoryStore]:
        """Hold the root lock with the index open; nested sessions share the outer one.

        The index stays open after the session for `KEEP_OPEN_S` (see `_keep_open`), so a burst of
        sessions in one process (a recall, the after-run cycle) loads the engine once.
        """
        try:
            self._lock.acquire()
        except OSError as e:
            msg = f"cannot lock the memory folder {self.root}: {e.strerror or e}; check that it is writable"
            raise MemoryStoreError(msg) from e
        clean = False
        try:
            with self._guard:
                self._depth += 1
            try:
                if self._depth == 1:
                    self._dirty = False
                    self._open_index()
                    self._ensure_manifest()
                    apply_line_edits(self, refresh=self.rebuilt)
                    refresh_confidences(self)
                yield self
                if self._depth == 1 and self._dirty:
                    # Only a session that ended cleanly records the index as current; after an
                    # error or a signal the fingerprint check decides at the next session.
                    self._save_state()
                clean = True
            finally:
                with self._guard:
                    self._depth -= 1
                    if self._depth == 0:
                        if clean and self._writes < RELOAD_AFTER:
                            self._keep_open()
                        else:  # the engine's state after an error is unknown: the next session loads it afresh
                            self._close_index()
        finally:
            self._lock.release()

    def _keep_open(self) -> None:
        """Leave the index open a short while; then release it, so other processes can load it. Call under _guard."""
        self._engine = self._engine_files(None if self._dirty_engine or not self._engine_paths else self._engine_paths)
        self._dirty_engine = False
        self._deadline = time.monotonic() + KEEP_OPEN_S
        if self._releaser is None:  # one thread per burst of sessions: it ends once it has closed the index
            self._releaser = threading.Thread(target=_release_when_idle, args=(weakref.ref(self),), daemon=True,
                                              name="tether-memory-index-release")
            self._releaser.start()

    def _close_index(self) -> None:
        self._seen = None
        self._writes = 0
        self._dirty_engine = True
        try:
            self.index.close()
        except Exception as e:  # the engine raises plain errors; the next session reloads and checks
            log.warning("memory index not closed cleanly: %s", e)

    def close(self) -> None:
        """Release the index and the folder watch now (also done when the store is collected or at exit)."""
        with self._guard:
            self._deadline = 0.0
            if self._depth == 0:
                self._close_index()
            if self._watch is not None:
                self._watch.close()
                self._watch = None

    def _open_index(self) -> None:
        """Open the index and check it reflects the markdown; rebuild it when it does not.

        The check is skipped when this process kept the index open since its last session, no other
        process recorded a change (state.json is what this process last saw) and the folder watch saw
        no file change: then nothing can have changed (see docs/memory.md, "The index").
        """
        self.rebuilt = False
        try:
            state = json.loads(read_text(self.state_path)) if self.state_path.is_file() else None
        except (json.JSONDecodeError, OSError, MemoryStoreError):
            state = None
        if self._watch is None and self._watch_ok:
            self._watch = FolderWatch.start([self.lessons_dir, self.rules_dir, self.runs_dir])
            self._watch_ok = self._watch is not None
        moved = self._watch.changed() if self._watch is not None else True
        if self._seen is not None and state == self._seen and not moved \
                and self._engine == self._engine_files(self._engine_paths):
            return  # the open index is current
        try:
            changed = self._seen is not None and self._engine != self._engine_files(self._engine_paths)
            if self._seen is not None and (state != self._seen or changed):
                self._close_index()  # another process (or a person) changed it since: load it afresh
            if self._seen is None:
                _take_over(self)
            self.index.open()
            self._dirty_engine = True
            self._files = self.fingerprint()
            if state is None or state != self._state(self.index.count()):
                log.info("memory index is stale or unrecorded; rebuilding from markdown")
                self.rebuild()
                self._save_state()
            else:
                self._seen = state
        except (IndexUnavailableError, json.JSONDecodeError, OSError) as e:
            fresh = not self.state_path.exists()
            (log.info if fresh else log.warning)("memory index unusable (%s); rebuilding from markdown", e)
            self.rebuild()
            self._save_state()

    def _engine_files(self, paths: list[str] | None = None) -> str:
        """The index engine's own files (name, size, mtime, inode): between sessions only another hand changes them.

        With `paths` (the files found when the index was left open) only those are checked: a file
        rewritten, truncated or removed shows; listing the folders again is left to a session that wrote.
        """
        if paths is None:
            paths = []
            for folder, dirs, files in os.walk(self.root / ".index"):
                dirs.sort()
                paths += [os.path.join(folder, n) for n in sorted(files) if n != "state.json"]
            self._engine_paths = paths
        h = hashlib.sha256()
        for path in paths:
            try:
                st = os.stat(path)
            except OSError:
                h.update(f"{path}:gone\n".encode())
                continue
            h.update(f"{path}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}\n".encode())
        return h.hexdigest()

    def _state(self, count: int) -> dict[str, object]:
        return {"version": STATE_VERSION, "backend": self.index.name, "dense": self.config.uses_dense,
                "count": count, "fingerprint": self._files}

    def _save_state(self) -> None:
        """Record the index as current: flushed, with the markdown's fingerprint as the session leaves it."""
        self.index.flush()
        self._dirty_engine = True
        if self._watch is not None:
            self._watch.changed()  # this session's own writes: the fingerprint below takes them in
        self._files = self.fingerprint()
        state = self._state(self.index.count())
        write_atomic(self.state_path, json.dumps(state))
        self._seen = state
        self._dirty = False
        self._writes += 1

    def fingerprint(self) -> str:
        """Digest of the indexed markdown as files: every lesson and rule file, and the runs folder.

        Each lesson and rule file counts by name, size, mtime and inode (an edit in place changes the
        mtime, an atomic rewrite the inode); the runs folder by its own mtime and inode, which change
        when a run folder is added or removed, so the cost does not grow with the number of runs.
        """
        h = hashlib.sha256()
        for folder in (self.lessons_dir, self.rules_dir):
            entries = []
            try:
                with os.scandir(folder) as it:
                    for e in it:
                        if e.name.endswith(".md") and e.is_file():
                            try:
                                entries.append((e.name, e.stat()))
                            except FileNotFoundError:
                                continue  # removed while listed: as if listed a moment later
            except FileNotFoundError:
                pass
            entries.sort(key=lambda x: x[0])
            h.update(f"{folder.name}/\n".encode())
            h.update("".join(f"{n}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}\n" for n, st in entries).encode())
        try:
            st = self.runs_dir.stat()
            h.update(f"runs/:{st.st_mtime_ns}:{st.st_ino}\n".encode())
        except FileNotFoundError:
            pass
        return h.hexdigest()

    def rebuild(self) -> int:
        """Recreate the index from markdown alone; returns the number of items indexed."""
        self.index.reset()
        docs = [self._lesson_doc(x) for x in self.lessons() if x.status == "live"]
        docs += [self._rule_doc(r) for r in self.rules() if r.status == "live"]
        docs += [self._run_doc(m) for m in self.runs()]
        self.index.upsert(docs)
        self.rebuilt = self._dirty = True
        return len(docs)

    # -- documents -------------------------------------------------------------
    @staticmethod
    def _lesson_doc(x: Lesson) -> IndexDoc:
        return IndexDoc(kind="lesson", id=x.id, text=x.index_text(), source_runs=[x.source_run] if x.source_run else [])

    @staticmethod
    def _rule_doc(r: Rule) -> IndexDoc:
        return IndexDoc(kind="rule", id=r.id, text=r.index_text(), source_runs=r.source_runs)

    @staticmethod
    def _run_doc(m: RunMeta) -> IndexDoc:
        return IndexDoc(kind="run", id=m.run_id, text=m.goal, source_runs=[m.run_id])

    # -- lessons ---------------------------------------------------------------
    def lesson_path(self, lesson_id: str) -> Path:
        return self.lessons_dir / f"{lesson_id}.md"

    def history_path(self, lesson_id: str) -> Path:
        """lessons/history/<id>.md: the lesson's archived (oldest) history entries."""
        return self.lessons_dir / HISTORY_DIR / f"{lesson_id}.md"

    def load_lesson(self, lesson_id: str) -> Lesson:
        path = self.lesson_path(lesson_id)
        if "/" in lesson_id or not path.is_file():
            msg = f"no lesson '{lesson_id}'; `tether memory list` shows the ids"
            raise UnknownMemoryItemError(msg)
        return lesson_from_markdown(read_text(path), path)

    def lessons(self) -> list[Lesson]:
        """Every readable lesson; a broken file is skipped with a warning naming it."""
        return _readable(sorted(self.lessons_dir.glob("*.md")), lambda p: lesson_from_markdown(read_text(p), p))

    def save_lesson(self, lesson: Lesson, *, new: bool = False, applying_edit: bool = False) -> None:
        """Write the lesson, re-index it, and (for a new one) list it in MEMORY.md.

        Its line is rewritten from the file, unless a person edited the line
        after this session began (kept for the next session to apply); pass
        `applying_edit` when the lesson already carries that edit.
        """
        lesson, moved = compact_history(lesson, self.config.history_keep)
        if moved:  # the archive first: a crash between the two writes repeats entries, never loses one
            archive = self.history_path(lesson.id)
            archive.parent.mkdir(exist_ok=True)
            old = read_text(archive) if archive.is_file() else ""
            write_atomic(archive, archive_markdown(lesson.id, old, moved))
        self._dirty = True
        write_atomic(self.lesson_path(lesson.id), lesson_to_markdown(lesson))
        if lesson.status == "live":
            self.index.upsert([self._lesson_doc(lesson)])
        else:
            self.index.delete([("lesson", lesson.id)])
        line = lesson_line(lesson) if lesson.status == "live" else None
        self._relist("lessons", lesson.id, line, new=new, force=applying_edit)

    def delete_lesson(self, lesson_id: str) -> None:
        self._dirty = True
        self.lesson_path(lesson_id).unlink(missing_ok=True)
        self.history_path(lesson_id).unlink(missing_ok=True)
        self.index.delete([("lesson", lesson_id)])
        self._relist("lessons", lesson_id, None, new=False)

    # -- rules -----------------------------------------------------------------
    def load_rule(self, rule_id: str) -> Rule:
        path = self.rules_dir / f"{rule_id}.md"
        if "/" in rule_id or not path.is_file():
            msg = f"no rule '{rule_id}'; `tether memory list` shows the ids"
            raise UnknownMemoryItemError(msg)
        return rule_from_markdown(read_text(path), path)

    def rules(self) -> list[Rule]:
        """Every readable rule; a broken file is skipped with a warning naming it."""
        return _readable(sorted(self.rules_dir.glob("*.md")), lambda p: rule_from_markdown(read_text(p), p))

    def save_rule(self, rule: Rule, *, new: bool = False, applying_edit: bool = False) -> None:
        """Write the rule, re-index it, and relist it (its line as for `save_lesson`)."""
        self._dirty = True
        write_atomic(self.rules_dir / f"{rule.id}.md", rule_to_markdown(rule))
        if rule.status == "live":
            self.index.upsert([self._rule_doc(rule)])
        else:
            self.index.delete([("rule", rule.id)])
        line = rule_line(rule, confidence=current_confidence(rule, self.config, self.clock()))
        self._relist("rules", rule.id, line if rule.status == "live" else None, new=new, force=applying_edit)

    def delete_rule(self, rule_id: str) -> None:
        self._dirty = True
        (self.rules_dir / f"{rule_id}.md").unlink(missing_ok=True)
        self.index.delete([("rule", rule_id)])
        self._relist("rules", rule_id, None, new=False)

    # -- runs ------------------------------------------------------------------
    def run_dir(self, run_id: str) -> Path:
        return self.runs_dir / run_id

    def has_run(self, run_id: str) -> bool:
        return "/" not in run_id and (self.run_dir(run_id) / "trajectory.md").is_file()

    def load_run(self, run_id: str) -> RunMeta:
        if not self.has_run(run_id):
            msg = f"no run '{run_id}' in memory; `tether memory list` shows the runs"
            raise UnknownMemoryItemError(msg)
        path = self.run_dir(run_id) / "trajectory.md"
        return _run_meta(read_front_matter(path), path)

    def runs(self) -> list[RunMeta]:
        """Every readable stored run; a broken trajectory.md is skipped with a warning naming it."""
        return _readable(sorted(self.runs_dir.glob("*/trajectory.md")), lambda p: _run_meta(read_front_matter(p), p))

    def save_run(self, record: RunRecord, meta: RunMeta) -> None:
        """Write runs/<id>/trajectory.md and trajectory.jsonl (raw turns) and index the run."""
        self._dirty = True
        folder = self.run_dir(record.run_id)
        write_atomic(folder / "trajectory.jsonl", trajectory_jsonl(record))
        write_atomic(folder / "trajectory.md", render_trajectory(meta, record))
        self.index.upsert([self._run_doc(meta)])

    def save_compilation(self, run_id: str, outcome: str, text: str) -> None:
        body = f"# Compilation of run {run_id}\n\nRaw turns: [trajectory.md](trajectory.md)\n\n{text.strip()}\n"
        write_atomic(
            self.run_dir(run_id) / "compilation.md", join_front_matter({"run_id": run_id, "outcome": outcome}, body)
        )

    def run_turns(self, run_id: str) -> list[Turn]:
        """The raw turns of a stored run: trajectory.jsonl, else read back from trajectory.md (a git clone)."""
        path = self.run_dir(run_id) / "trajectory.jsonl"
        if not path.is_file():
            md = self.run_dir(run_id) / "trajectory.md"
            return parse_turns(read_text(md)) if md.is_file() else []
        return [Turn.model_validate_json(line) for line in read_text(path).splitlines() if line.strip()]

    def delete_run(self, run_id: str) -> None:
        self._dirty = True
        shutil.rmtree(self.run_dir(run_id), ignore_errors=True)
        self.index.delete([("run", run_id)])

    # -- MEMORY.md and search --------------------------------------------------
    def manifest(self) -> Manifest:
        """What MEMORY.md lists; without the file, every live item (a copy the caller may change)."""
        return self._manifest().model_copy(deep=True)

    def listed(self) -> Manifest:
        """What MEMORY.md lists, shared and cached while the file is unchanged: read it, never change it."""
        return self._manifest()

    def _manifest(self) -> Manifest:
        try:
            st = self.manifest_path.stat()
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            stamp = None
        if stamp is not None and self._manifest_cache and self._manifest_cache[0] == stamp:
            return self._manifest_cache[1]
        found = read_manifest(self.manifest_path)
        if stamp is not None:
            self._manifest_cache = (stamp, found)
        if found.exists:
            return found
        return Manifest(lessons={x.id: lesson_line(x) for x in self.lessons() if x.status == "live"},
                        rules={r.id: rule_line(r, confidence=current_confidence(r, self.config, self.clock()))
                               for r in self.rules() if r.status == "live"})

    def _ensure_manifest(self) -> None:
        """Write MEMORY.md when it is missing (listing every live item), so a person finds the page to edit."""
        if self.manifest_path.exists():
            return
        m = self.manifest()
        try:
            write_atomic(self.manifest_path, render_manifest(m))
            write_record(self.lines_path, m, {f"{k}/{i}": line_digest(v) for k in ("lessons", "rules")
                                              for i, v in getattr(m, k).items()})
        except StateFileError as e:  # a full disk: the next write that must happen says so
            log.warning("MEMORY.md not written: %s", e)
        self._manifest_cache = None

    def forget_manifest_cache(self) -> None:
        """Re-read MEMORY.md next time (after writing it outside `_relist`)."""
        self._manifest_cache = None

    def relist(self, kind: Literal["lessons", "rules"], item_id: str, line: str) -> None:
        """Replace a listed item's line with `line`, whatever it says now."""
        self._relist(kind, item_id, line, new=False, force=True)

    def _relist(self, kind: Literal["lessons", "rules"], item_id: str, line: str | None, *, new: bool,
                force: bool = False) -> None:
        """Update one item's MEMORY.md line: drop it (line None), refresh it, or add it when new."""
        self._manifest_cache = None  # writes re-read the file: a cache keyed on mtime can miss a same-tick write
        existed = self.manifest_path.is_file()
        m = self.manifest()
        listed = getattr(m, kind)
        key, current = f"{kind}/{item_id}", listed.get(item_id)
        record = self.line_record() if existed else {}
        if line is not None and not force and kind == "lessons" and item_id in m.person:
            return  # a line a person wrote lists this lesson: it is never rewritten
        if line is None:
            listed.pop(item_id, None)
        elif current is not None and not force and record.get(key, line_digest(current)) != line_digest(current):
            return  # a person edited the line after this session began: the next session applies it
        elif current is not None or new:
            listed[item_id] = line
        else:
            return  # a person deleted the line: the item stays forgotten
        write_atomic(self.manifest_path, render_manifest(m))
        if not existed:  # every line just written is the store's own
            record = {f"{k}/{i}": line_digest(v) for k in ("lessons", "rules") for i, v in getattr(m, k).items()}
        write_record(self.lines_path, m, record | ({key: line_digest(line)} if line else {}))

    def line_record(self) -> dict[str, str]:
        """`kind/id` -> digest of the MEMORY.md line the store last wrote or accepted for it."""
        return read_record(self.lines_path)

    def search(self, text: str, kind: Kind, limit: int) -> list[IndexHit]:
        """Index hits for `text`, keeping only lessons and rules MEMORY.md still lists."""
        if limit <= 0:
            return []
        if kind == "run":
            return self.index.search(text, kind, limit)
        manifest = self._manifest()
        listed = manifest.lessons if kind == "lesson" else manifest.rules
        fetch = limit * 4
        while True:
            hits = self.index.search(text, kind, fetch)
            kept = [h for h in hits if h.id in listed]
            if len(kept) >= limit or len(hits) < fetch:
                return kept[:limit]
            fetch *= 4


T = TypeVar("T")


_HOLDERS: dict[str, weakref.ref[MemoryStore]] = {}
"""Memory root -> the store of this process that last opened its index (it may hold it open idle)."""


def _take_over(store: MemoryStore) -> None:
    """Have another store of this process on the same root release the index now (the engine admits one)."""
    key = str(store.root.resolve())
    other = _HOLDERS.get(key)
    holder = other() if other is not None else None
    if holder is not None and holder is not store:
        with holder._guard:
            if holder._depth == 0:
                holder._deadline = 0.0
                holder._close_index()
    _HOLDERS[key] = weakref.ref(store)


def _release_when_idle(ref: weakref.ref[MemoryStore]) -> None:
    """The release thread: close the store's index once no session used it for KEEP_OPEN_S, then end."""
    while True:
        store = ref()
        if store is None:
            return
        with store._guard:
            wait = store._deadline - time.monotonic()
            if wait <= 0 and store._depth == 0:
                store._close_index()
                store._releaser = None
                return
        del store  # no strong reference while asleep: a dropped store is collected (and its index closed)
        time.sleep(max(wait, 0.02))


def _shut(index: LessonIndex, guard: threading.RLock) -> None:
    """Close a collected (or, at exit, a still open) store's index: flushed, its engine released."""
    with guard:
        try:
            index.close()
        except Exception as e:  # at exit nothing is left to tell; the next session checks the index
            log.debug("memory index not closed at exit: %s", e)


def _readable(paths: list[Path], parse: Callable[[Path], T]) -> list[T]:
    """Parse each file; one that fails is named in a warning and left out, never hiding the rest."""
    out = []
    for path in paths:
        try:
            out.append(parse(path))
        except MemoryStoreError as e:
            log.warning("skipping broken memory file: %s", e)
    return out


def _run_meta(data: dict[str, object], path: Path) -> RunMeta:
    try:
        return RunMeta.model_validate(data)
    except ValidationError as e:
        msg = f"{path}: not a valid run record ({e.errors()[0]['msg']}); fix its front matter or delete the run folder"
        raise MemoryStoreError(msg) from e
