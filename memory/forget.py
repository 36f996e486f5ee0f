"""Provenance: forget a run and everything memory derived from it.

Parts: `ForgetReport`, `forget_run`, `forget_lesson`, `forget_rule`.

`forget_lesson` deletes one lesson (file, index entry, MEMORY.md line); the
runs that used it keep their raw record. `forget_rule` deletes one rule and
strips its error signature from the stored runs, so it is learnt again only
when its error recurs twice anew within the window.

`forget_run` removes: the run's folder; lessons whose
source is the run; revision-history entries the run caused (an accepted one
is undone by restoring the text it replaced, and later accepted revisions,
which were written over that text, are undone with it); the run from every
rule's sources and applications (a rule left without sources is deleted,
others have their confidence recomputed). Any remaining mention of the run id
(for instance a later run that read its files) is redacted, and the index is
rebuilt so that no deleted payload lingers in the engine's files.

Forgetting reaches the files of the memory folder and its index only: git
history (commits made before, by `memory.auto_commit` or a person), clones,
backups and the model provider's logs still hold what they held.
"""

from __future__ import annotations

import re
from datetime import datetime

from pydantic import BaseModel, Field

from tether.common.atomic import write_atomic
from tether.memory.errors import UnknownMemoryItemError
from tether.memory.files import join_front_matter, read_text, split_front_matter
from tether.memory.lesson import RETIRED, Lesson, Revision
from tether.memory.merge import MERGED
from tether.memory.rule import refresh
from tether.memory.store import MemoryStore

REDACTED = "<forgotten-run>"


class ForgetReport(BaseModel):
    """What `forget_run` removed or changed."""

    run_id: str
    lessons_deleted: list[str] = Field(default_factory=list)
    lessons_changed: list[str] = Field(default_factory=list)
    rules_deleted: list[str] = Field(default_factory=list)
    rules_changed: list[str] = Field(default_factory=list)
    files_redacted: list[str] = Field(default_factory=list)


def _unrevise(lesson: Lesson, run_id: str, now: datetime) -> Lesson:
    history = lesson.history
    first = next((i for i, h in enumerate(history) if h.run_id == run_id and h.status == "accepted"), None)
    update: dict[str, object] = {}
    if first is None:
        kept = [h for h in history if h.run_id != run_id]
    else:
        undone = [h for h in history[first + 1 :] if h.status == "accepted" and h.run_id != run_id]
        kept = [h for i, h in enumerate(history) if h.run_id != run_id and not (i > first and h.status == "accepted")]
        kept.append(
            Revision(
                at=now,
                run_id="",
                status="reverted",
                reason=f"text restored to before a forgotten run's revision; {len(undone)} later revision(s) undone",
            )
        )
        update |= {"insight": history[first].before, "applicability": history[first].before_applicability}
        if any(RETIRED in h.reason or MERGED in h.reason for h in history[first:] if h.status == "accepted"):
            update["status"] = "live"  # the retirement (or merge) was undone with the revision that made it
    update |= {"history": kept, "revision_count": sum(h.status == "accepted" for h in kept)}
    return lesson.model_copy(update=update)


def _redact(store: MemoryStore, run_id: str) -> list[str]:
    pattern = re.compile(rf"(?<![\w.-]){re.escape(run_id)}(?![\w-])")
    changed = []
    for path in sorted(store.root.rglob("*")):
        rel = path.relative_to(store.root)
        if not path.is_file() or rel.parts[0].startswith(".") or path.suffix not in {".md", ".jsonl"}:
            continue
        text = read_text(path)
        if run_id in text:
            write_atomic(path, pattern.sub(REDACTED, text).replace(run_id, REDACTED))
            changed.append(str(rel))
    return changed


def forget_run(store: MemoryStore, run_id: str, now: datetime) -> ForgetReport:
    """Remove a run and all it taught; raises UnknownMemoryItemError if nothing mentions it."""
    report = ForgetReport(run_id=run_id)
    with store.session():
        lessons, rules = store.lessons(), store.rules()
        cited = store.has_run(run_id) or any(
            x.source_run == run_id or any(h.run_id == run_id for h in x.history) for x in lessons
        ) or any(run_id in r.source_runs or any(a.run == run_id for a in r.applied) for r in rules)
        if not cited:
            msg = f"no run '{run_id}' in memory; `tether memory list` shows the runs"
            raise UnknownMemoryItemError(msg)
        for x in lessons:
            if x.source_run == run_id:
                store.delete_lesson(x.id)
                report.lessons_deleted.append(x.id)
            elif any(h.run_id == run_id for h in x.history):
                undone = _unrevise(x, run_id, now)
                store.save_lesson(undone, new=x.status == "retired" and undone.status == "live")
                report.lessons_changed.append(x.id)
        for r in rules:
            if run_id not in r.source_runs and all(a.run != run_id for a in r.applied):
                continue
            sources = [s for s in r.source_runs if s != run_id]
            if not sources:
                store.delete_rule(r.id)
                report.rules_deleted.append(r.id)
                continue
            kept = r.model_copy(update={"source_runs": sources, "applied": [a for a in r.applied if a.run != run_id]})
            store.save_rule(refresh(kept, store.config, now))
            report.rules_changed.append(r.id)
        store.delete_run(run_id)
        report.files_redacted = _redact(store, run_id)
        store.rebuild()
    return report


def forget_lesson(store: MemoryStore, lesson_id: str) -> dict[str, str]:
    """Delete one lesson; UnknownMemoryItemError (naming `memory list`) when there is none."""
    with store.session():
        lesson = store.load_lesson(lesson_id)
        store.delete_lesson(lesson.id)
        store.rebuild()  # no deleted text lingers in the engine's files
    return {"kind": "lesson", "id": lesson.id, "source_run": lesson.source_run}


def forget_rule(store: MemoryStore, rule_id: str) -> dict[str, object]:
    """Delete one rule and the record of its error in stored runs (so it is not relearnt from them)."""
    with store.session():
        rule = store.load_rule(rule_id)
        stripped = []
        for meta in store.runs():
            if rule.signature in meta.error_signatures:
                path = store.run_dir(meta.run_id) / "trajectory.md"
                front, body = split_front_matter(read_text(path), path)
                front["error_signatures"] = [s for s in front.get("error_signatures", []) if s != rule.signature]
                write_atomic(path, join_front_matter(front, body))
                stripped.append(meta.run_id)
        store.delete_rule(rule.id)
        store.rebuild()
    return {"kind": "rule", "id": rule.id, "runs_stripped": stripped}
