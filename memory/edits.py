"""A person's edits of MEMORY.md lines, written back into the lesson and rule files.

Parts: `apply_line_edits(store, refresh)` and `refresh_confidences(store)`,
run by `MemoryStore.session()` under the root lock, before the session reads
or writes anything else; `person_lesson` (what a line a person adds becomes).

Lines a person adds (any line below "## Lessons" that is not an item's, or a
line in the item form whose id has no file and was never written by the
store) become person lessons (`author: person`, no source run, id `P-` and a
digest of the text, or the id the line gives), listed in place. A line that
cannot be read (a broken link, a line the store wrote whose file is gone) is
kept and named in a warning; nothing a person wrote is deleted.

The store records a digest of each line it writes (`.memory-lines.json`). A
listed line whose digest differs was changed by a person:

* a lesson line: its text becomes the lesson's title and Insight, saved as an
  accepted revision (verdict `edited`, reason "edited by a person in
  MEMORY.md", the replaced text kept in `before`) and re-indexed at once;
* a rule line: its text becomes the rule's text (`edited` set to the time).

Markdown stays the truth: the edit lives in the file and its history, and
the line is then rewritten from the file like any other. A line whose text
changes nothing (whitespace, the outcome, the confidence) or is emptied is
rewritten from the file. A line the store has no digest of (written before
lines became editable, or the record was lost) is a person's edit only when
it is not the store's rendering and MEMORY.md is newer than the item's file;
otherwise the file wins. With `refresh` (the index was rebuilt because
markdown changed behind the store's back), unedited lines are rewritten from
their files, so a hand-edited lessons/<id>.md shows in MEMORY.md too; a
lesson whose title or insight no longer says what its line (written by the
store) said was edited by hand in its file: that edit gets the same history
entry as a MEMORY.md edit (reason "edited by a person in lessons/<id>.md",
the replaced text in `before`) and pins the lesson, unless the file's own
history explains the change.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from tether.common.atomic import write_atomic
from tether.common.errors import StateFileError
from tether.memory.errors import MemoryStoreError, UnknownMemoryItemError
from tether.memory.files import read_text
from tether.memory.lesson import EDITED, PERSON_EDIT, Lesson, Revision
from tether.memory.manifest import (
    Manifest,
    edited_lesson,
    edited_rule,
    is_generated,
    lesson_line,
    lesson_text,
    line_digest,
    one_line,
    person_lesson_id,
    read_manifest,
    rule_line,
    split_person_line,
)
from tether.memory.rule import Rule, current_confidence

if TYPE_CHECKING:
    from tether.memory.store import MemoryStore

log = logging.getLogger(__name__)
Kind = Literal["lessons", "rules"]
PERSON_AT = "person:"
"""Line-record value of a person's own line: its line index (a person line's text is never the store's)."""
FILE_EDIT = "edited by a person in lessons/{id}.md"
"""Reason of the history entry a hand edit of a lesson file gets (verdict `edited`: the lesson is pinned)."""
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
"""An id a person may give a lesson in MEMORY.md: it becomes a file name under lessons/, never a path."""


def stamp(path: Path) -> tuple[int, int, int] | None:
    """(mtime, size, inode) of a file, None when it is missing."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def read_record(path: Path) -> dict[str, str]:
    """The line record: `kind/id` -> digest of the line the store last wrote or accepted."""
    try:
        data = json.loads(read_text(path)) if path.is_file() else {}
    except (json.JSONDecodeError, MemoryStoreError):
        return {}
    return data if isinstance(data, dict) else {}


def write_record(path: Path, m: Manifest, record: dict[str, str]) -> None:
    """Write the record for the items `m` lists; call after writing MEMORY.md.

    In that order a crash in between leaves lines that match their files, and
    those are adopted, never mistaken for a person's edit.
    """
    keys = {f"{k}/{i}" for k in ("lessons", "rules") for i in getattr(m, k)}
    write_atomic(path, json.dumps({k: v for k, v in record.items() if k in keys}, sort_keys=True))


def apply_line_edits(store: MemoryStore, refresh: bool = False) -> list[str]:
    """Write every pending MEMORY.md edit into its item's file; returns the ids changed."""
    path = store.manifest_path
    seen = (stamp(path), stamp(store.lines_path))
    if seen[0] is None or (seen == store.edits_checked and not refresh):
        return []
    changed = _adopt_added(store, read_manifest(path))
    manifest, record = read_manifest(path), store.line_record()
    for n, line, why in manifest.unreadable:
        log.warning("MEMORY.md line %d is kept but not read (%s): %s", n, why, line)
    adopted: dict[str, str] = {}
    for kind, listed in (("lessons", manifest.lessons), ("rules", manifest.rules)):
        for item_id, line in listed.items():
            key = f"{kind}/{item_id}"
            if kind == "lessons" and item_id in manifest.person:
                continue  # a person's own line: its lesson is kept by _adopt_added, the line never rewritten
            if record.get(key) == line_digest(line) and not refresh:
                continue
            try:
                if _settle(store, kind, item_id, line, record.get(key), seen[0][0], adopted):
                    changed.append(item_id)
            except UnknownMemoryItemError:
                if kind == "lessons" and key not in record and SAFE_ID.match(item_id):
                    # a person wrote a line in the item form, with an id of their own: a person lesson by that id
                    text = lesson_text(line)
                    if text:
                        store.save_lesson(person_lesson(text, store.clock()).model_copy(update={"id": item_id}))
                        log.info("a line added to MEMORY.md became lesson %s", item_id)
                    changed.append(item_id)
                    continue
                # the store wrote this line, then the file was deleted by hand: the line stays for the person
                log.warning("MEMORY.md line of %s is kept but not read (there is no %s/%s.md: restore the file "
                            "or delete the line)", item_id, kind, item_id)
                continue
            except StateFileError as e:
                log.warning("MEMORY.md line of %s not applied: %s", item_id, e)
    if adopted:
        done = read_manifest(path)
        write_record(store.lines_path, done, store.line_record() | {k: line_digest(v) for k, v in adopted.items()})
    store.edits_checked = (stamp(path), stamp(store.lines_path))
    return changed


def refresh_confidences(store: MemoryStore) -> None:
    """Rewrite each listed rule line whose confidence is not the value in force now (it fades with idle time)."""
    listed = store.listed().rules
    if not listed:
        return
    record, now = store.line_record(), store.clock()
    for rule_id, line in listed.items():
        if record.get(f"rules/{rule_id}") != line_digest(line):
            continue  # a person's pending edit, or not the store's line: left to apply_line_edits
        try:
            rule = store.load_rule(rule_id)
        except (UnknownMemoryItemError, StateFileError):
            continue
        if rule.status != "live":
            continue
        fresh = rule_line(rule, confidence=current_confidence(rule, store.config, now))
        if fresh != line:
            store.relist("rules", rule_id, fresh)


def person_lesson(text: str, now: datetime) -> Lesson:
    """The lesson a line a person added becomes: `Title: insight`, or all insight (the title its start)."""
    title, insight = split_person_line(text)
    return Lesson(id=person_lesson_id(insight), title=title or one_line(insight, 60), source_run="",
                  source_outcome=None, author="person", created=now, insight=insight, applicability="")


def _adopt_added(store: MemoryStore, manifest: Manifest) -> list[str]:
    """Make sure each line a person added has its person lesson (written, indexed, live); the line stays as is.

    A person line whose text was changed in place (the line at the same position listed another
    person lesson, whose text is now nowhere in the file) is that lesson reworded (`_reword`).
    """
    now, made = store.clock(), []
    record = store.line_record()
    gone = {int(v.removeprefix(PERSON_AT)): k.split("/", 1)[1] for k, v in record.items()
            if v.startswith(PERSON_AT) and v.removeprefix(PERSON_AT).isdigit() and k.split("/", 1)[1]
            not in manifest.lessons}
    for n, text in manifest.added:
        lesson = person_lesson(text, now)
        if manifest.person.get(lesson.id) is None:
            continue  # the same text twice: one lesson
        try:
            current = store.load_lesson(lesson.id)
        except UnknownMemoryItemError:
            current = None
        except StateFileError as e:
            log.warning("MEMORY.md line %r not read: %s", text, e)
            continue
        if current is not None and current.status == "live":
            continue
        if current is None and n in gone and _reword(store, gone.pop(n), lesson, now):
            made.append(lesson.id)
            continue
        if current is not None:  # the same text added again after it was retired: revived
            lesson = current.model_copy(update={"status": "live"})
        store.save_lesson(lesson)  # its own line lists it; MEMORY.md is not rewritten
        made.append(lesson.id)
        log.info("a line added to MEMORY.md became lesson %s", lesson.id)
    _record_person_lines(store, manifest)
    return made


def _reword(store: MemoryStore, old_id: str, new: Lesson, now: datetime) -> bool:
    """Give the person lesson `old_id` the text of its edited line: one lesson, its id the new text's, history kept."""
    try:
        old = store.load_lesson(old_id)
    except (UnknownMemoryItemError, StateFileError):
        return False
    if old.author != "person" or old.status != "live":
        return False
    revision = Revision(at=now, run_id="", verdict=EDITED, status="accepted", before=old.insight,
                        before_applicability=old.applicability,
                        reason=f"{PERSON_EDIT} (its own line reworded; the lesson was {old.id})")
    archive = store.history_path(old.id)
    if archive.is_file():  # the archived history moves with the lesson
        text = read_text(archive).replace(old.id, new.id)
        write_atomic(store.history_path(new.id), text)
    store.save_lesson(old.model_copy(update={
        "id": new.id, "title": new.title, "insight": new.insight, "history": [*old.history, revision],
        "revised": now, "revision_count": old.revision_count + 1}))
    store.delete_lesson(old.id)
    log.info("a person's MEMORY.md line was reworded: lesson %s is now %s", old.id, new.id)
    return True


def _record_person_lines(store: MemoryStore, manifest: Manifest) -> None:
    """Note where each person line is (`person:<line index>`), so a line reworded in place is known next time."""
    record = store.line_record()
    mine = {f"lessons/{pid}": f"{PERSON_AT}{n}" for pid, n in manifest.person.items()}
    if {k: v for k, v in record.items() if v.startswith(PERSON_AT)} == mine:
        return
    try:
        write_record(store.lines_path, manifest, {k: v for k, v in record.items()
                                                  if not v.startswith(PERSON_AT)} | mine)
    except StateFileError as e:  # a full disk: a reworded line then makes a new lesson, as before
        log.warning("person lines not recorded: %s", e)


def _settle(store: MemoryStore, kind: Kind, item_id: str, line: str, recorded: str | None,
            listed_at: int, adopted: dict[str, str]) -> bool:
    """Apply, adopt or rewrite one line; True when the item's file changed."""
    item: Lesson | Rule = store.load_lesson(item_id) if kind == "lessons" else store.load_rule(item_id)
    generated = lesson_line(item) if isinstance(item, Lesson) else \
        rule_line(item, confidence=current_confidence(item, store.config, store.clock()))
    file = store.lesson_path(item_id) if kind == "lessons" else store.rules_dir / f"{item_id}.md"
    file_wins = recorded is None and file.stat().st_mtime_ns > listed_at  # no record: the newer side wins
    if isinstance(item, Lesson) and recorded == line_digest(line) and not is_generated(line, item) \
            and _pin_file_edit(store, item, line):
        return True
    if recorded == line_digest(line) or is_generated(line, item) or file_wins:
        _rewrite(store, kind, item_id, line, generated, adopted)
        return False
    now = store.clock()
    if isinstance(item, Lesson):
        title, insight = edited_lesson(line, item)
        if not insight or (title, insight) == (one_line(item.title), one_line(item.insight)):
            _rewrite(store, kind, item_id, line, generated, adopted)
            return False
        revision = Revision(at=now, run_id="", verdict=EDITED, status="accepted", reason=PERSON_EDIT,
                            before=item.insight, before_applicability=item.applicability)
        store.save_lesson(item.model_copy(update={
            "title": title, "insight": insight, "history": [*item.history, revision],
            "revised": now, "revision_count": item.revision_count + 1}), applying_edit=True)
    else:
        text = edited_rule(line)
        if not text or text == one_line(item.text):
            _rewrite(store, kind, item_id, line, generated, adopted)
            return False
        store.save_rule(item.model_copy(update={"text": text, "edited": now}), applying_edit=True)
    log.info("applied a person's MEMORY.md edit to %s", item_id)
    return True


def _pin_file_edit(store: MemoryStore, item: Lesson, line: str) -> bool:
    """Record a hand edit of lessons/<id>.md as a person's edit (history entry, pinned); True when it was one.

    The store wrote `line` from the file, so a title or insight that differs from it was changed in the
    file behind the store, unless the file's own history explains the change (a write of the store cut
    short before MEMORY.md, or an older version of the file checked out with its history).
    """
    old_title, old_insight = edited_lesson(line, item)
    if not old_insight or (old_title, old_insight) == (one_line(item.title), one_line(item.insight)):
        return False
    if any(h.before and one_line(h.before) == old_insight for h in item.history):
        return False
    now = store.clock()
    revision = Revision(at=now, run_id="", verdict=EDITED, status="accepted", reason=FILE_EDIT.format(id=item.id),
                        before=old_insight, before_applicability=item.applicability)
    store.save_lesson(item.model_copy(update={"history": [*item.history, revision], "revised": now,
                                              "revision_count": item.revision_count + 1}), applying_edit=True)
    log.info("recorded a person's edit of lessons/%s.md (the lesson is pinned)", item.id)
    return True


def _rewrite(store: MemoryStore, kind: Kind, item_id: str, line: str, generated: str,
             adopted: dict[str, str]) -> None:
    """Make the line the file's rendering: record it as is, or rewrite it when it differs."""
    if line == generated:
        adopted[f"{kind}/{item_id}"] = line
    else:
        store.relist(kind, item_id, generated)
