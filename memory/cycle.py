"""The memory cycle around one task: read before it, revise and write after it.

Parts: `MemoryCycle` with `read(goal) -> Recall` and
`after_run(record, model, recall) -> CycleReport`. After a run, in order:
save the raw trajectory; compile it (one call); revise each lesson the run
relied on (one call each, source-only check in code); write at most N new
lessons with the revised ones as exemplars (one call); credit the rules that
applied and learn new ones (one call per new rule). Model calls happen with
no lock held; each write takes the memory root's lock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from langchain_core.language_models import BaseChatModel

from tether.common.projectid import portable_project
from tether.memory.config import MemoryConfig
from tether.memory.errors import MemoryStoreError, UnknownMemoryItemError
from tether.memory.history import commit_memory
from tether.memory.index import LessonIndex
from tether.memory.ranking import boosted_score, prefer_project
from tether.memory.report import CycleReport, Recall, RecalledLesson, RecalledRun, StepResult
from tether.memory.revise import revise_lesson, used_lessons
from tether.memory.rule import refresh
from tether.memory.rules import credit, pending_rules, select_rules, signatures, write_rule
from tether.memory.run import RunMeta, RunRecord
from tether.memory.store import MemoryStore
from tether.memory.write import compile_run, new_lessons

Clock = Callable[[], datetime]
log = logging.getLogger(__name__)


def utc_now() -> datetime:
    return datetime.now(UTC)


class MemoryCycle:
    """ReHarness + WikiTrace over one memory root."""

    def __init__(self, root: Path, config: MemoryConfig, index: LessonIndex | None = None,
                 clock: Clock = utc_now) -> None:
        self.store = MemoryStore(root, config, index, clock)
        self.config = config
        self.clock = clock

    def read(self, goal: str, run_id: str = "", project: str = "", *, sources: bool = True) -> Recall:
        """Top-k listed lessons, rules to inject, and the most similar past runs.

        Lessons are ranked by similarity times their confirmation boost, the
        current `project` first (see memory.ranking). `run_id` seeds the rule
        trial draw. With `sources` False (the lessons-only baseline) no past
        runs are listed and the prompt carries neither source links nor
        descent rules.
        """
        store, cfg, project = self.store, self.config, portable_project(project)
        with store.session():
            ranked = []
            for hit in store.search(goal, "lesson", cfg.top_k * 4):
                try:
                    x = store.load_lesson(hit.id)
                except UnknownMemoryItemError:
                    continue  # file deleted by hand; the next session's fingerprint check reindexes
                except MemoryStoreError as e:
                    log.warning("recall skips a broken lesson: %s", e)
                    continue
                ranked.append((boosted_score(hit.score, x, cfg), x))
            ranked.sort(key=lambda sx: -sx[0])
            chosen = prefer_project(
                [((s, x), x.project) for s, x in ranked], project, cfg.top_k, cfg.recall_global_share
            )
            lessons = [RecalledLesson(id=x.id, title=x.title, insight=x.insight, applicability=x.applicability,
                                      source_run=x.source_run, source_outcome=x.source_outcome, score=s,
                                      project=x.project, confirmations=x.confirmations) for s, x in chosen]
            runs = []
            for hit in store.search(goal, "run", cfg.similar_runs if sources else 0):
                try:
                    m = store.load_run(hit.id)
                except UnknownMemoryItemError:
                    continue
                except MemoryStoreError as e:
                    log.warning("recall skips a broken run record: %s", e)
                    continue
                runs.append(RecalledRun(run_id=m.run_id, goal=m.goal, outcome=m.outcome, score=m.score))
            rules, draw = select_rules(store, goal, run_id, project)
        return Recall(goal=goal, lessons=lessons, rules=rules, runs=runs, project=project, trial_draw=draw,
                      sources=sources)

    def after_run(self, record: RunRecord, model: BaseChatModel, recall: Recall | None = None) -> CycleReport:
        """Write the run into memory and learn from it; call once per run, after the gate."""
        store, recall = self.store, recall or Recall(goal=record.goal)
        now = self.clock()
        finished = record.finished or now
        project = portable_project(record.project or recall.project)  # memory files name no absolute path
        record = record.model_copy(update={"finished": finished, "project": project})
        used, unused = used_lessons(record, recall)
        report = CycleReport(run_id=record.run_id, used_lessons=used, unused_lessons=unused)
        meta = RunMeta(run_id=record.run_id, goal=record.goal, outcome=record.outcome, score=record.score,
                       finished=finished, turns=len(record.turns), lessons_used=used,
                       error_signatures=list(signatures(record)),
                       gate_passed=record.gate.passed if record.gate else None,
                       gate_failed=record.gate.failed if record.gate else [], project=record.project)
        with store.session():
            store.save_run(record, meta)
        report.steps.append(StepResult(step="trajectory", target=record.run_id, status="ok"))

        compilation, step, calls = compile_run(model, record)
        report.steps.append(step)
        report.calls += calls
        with store.session():
            store.save_compilation(record.run_id, record.outcome, compilation or "(compilation unavailable)")

        for lesson_id in used:
            step, calls = revise_lesson(store, model, lesson_id, record, now)
            report.steps.append(step)
            report.calls += calls

        exemplars = []
        for lesson_id in used:
            try:
                exemplars.append(store.load_lesson(lesson_id))
            except UnknownMemoryItemError:
                continue
        written, steps, calls = new_lessons(store, model, record, compilation, exemplars, now)
        report.new_lessons, report.steps, report.calls = written, report.steps + steps, report.calls + calls

        self._rules(record, recall, finished, report, model)
        if self.config.auto_commit:
            with store.session():  # under the lock: no other run is halfway through a write
                message = (f"memory: run {record.run_id} ({record.outcome}): {len(report.new_lessons)} new lesson(s), "
                           f"{len(used)} revised, {len(report.rules_created)} new rule(s)")
                report.commit = commit_memory(store.root, message) or ""
        return report

    def _rules(self, record: RunRecord, recall: Recall, finished: datetime, report: CycleReport,
               model: BaseChatModel) -> None:
        store = self.store
        with store.session():
            report.steps += credit(store, record, recall.rules)
            report.rules_updated, fresh = pending_rules(store, record, finished)
        for sig, earlier in fresh.items():
            rule, step, call = write_rule(model, record, sig, earlier, finished, self.config)
            report.steps.append(step)
            if call is not None:
                report.calls.append(call)
            if rule is None:
                continue
            with store.session():
                try:  # another run may have learnt the same rule meanwhile
                    current = store.load_rule(rule.id)
                    merged = sorted(set(current.source_runs) | set(rule.source_runs))
                    store.save_rule(refresh(current.model_copy(update={"source_runs": merged}), self.config, finished))
                    report.rules_updated.append(rule.id)
                except UnknownMemoryItemError:
                    store.save_rule(rule, new=True)
                    report.rules_created.append(rule.id)
