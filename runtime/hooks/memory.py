"""Memory's side of a run: recall before it, the ReHarness cycle after it.

Translates the run journal into memory's `RunRecord` (memory never reads
the runner's files) and reports what the cycle did into the run's JSON.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from langchain_core.language_models import BaseChatModel

from tether.common.atomic import write_atomic
from tether.common.errors import TetherError
from tether.common.events import (
    CommandProposed,
    ExecFinished,
    SummaryWritten,
    VerdictRecorded,
    read_events,
)
from tether.memory.cycle import MemoryCycle
from tether.memory.report import Recall
from tether.memory.run import FailedCommand, GateSummary, Turn, program_of
from tether.memory.run import RunRecord as MemoryRunRecord
from tether.runtime.config import TetherConfig
from tether.runtime.hooks.base import MemoryContext, NoHooks, RunInfo, RunRecord

log = logging.getLogger(__name__)
RECALL_FILE = "recall.json"
REPORT_FILE = "memory.json"
ERROR_TAIL = 600


def memory_record(record: RunRecord) -> MemoryRunRecord:
    """The run as memory sees it: raw turns, failures, gate, the lessons the model cited."""
    events = read_events(record.journal_path)
    proposed = {e.cmd_id: e for e in events if isinstance(e, CommandProposed)}
    verdicts = {e.cmd_id: e for e in events if isinstance(e, VerdictRecorded)}
    results = {e.cmd_id: e for e in events if isinstance(e, ExecFinished)}
    summaries = [e for e in events if isinstance(e, SummaryWritten)]
    turns, failed = [], []
    for cmd_id, p in proposed.items():
        res, verdict = results.get(cmd_id), verdicts.get(cmd_id)
        if res is None:
            why = f"not run: guardian {verdict.enforced} ({verdict.reason})" if verdict else "not run"
            turns.append(Turn(step=p.step, command=p.command, output=why))
            continue
        turns.append(Turn(step=p.step, command=p.command, exit_code=res.exit_code, output=res.output))
        if res.exit_code != 0:
            failed.append(FailedCommand(tool=program_of(p.command), command=p.command, error=res.output[-ERROR_TAIL:]))
    gate = record.gate or {}
    failed_ids = [r["id"] for r in gate.get("results", []) if r.get("status") == "fail"]
    summary = summaries[-1] if summaries else None
    return MemoryRunRecord(
        run_id=record.run_id,
        goal=record.goal,
        outcome="success" if record.status == "success" else "failure",
        turns=turns,
        gate=GateSummary(passed=bool(gate.get("passed")), failed=failed_ids, notes=record.reason) if gate else None,
        lessons_used=summary.lessons_used if summary else [],
        failed_commands=failed,
        summary=summary.text if summary else "",
    )


class MemoryHooks(NoHooks):
    """Reads memory into the prompts before a run and learns from the run after it.

    Trust decisions are not memory's: those methods stay NoHooks' no-ops.
    """

    def __init__(self, config: TetherConfig, *, project: str | None = None, sources: bool = True,
                 learn: bool = True) -> None:
        """`project` overrides the workspace's identity (an eval shares one across tasks);
        `sources=False, learn=False` is the lessons-only baseline (recall, nothing after)."""
        self.config = config
        self.cycle = MemoryCycle(config.memory_dir, config.memory)
        self.project, self.sources, self.learn = project, sources, learn

    def before_run(self, run: RunInfo) -> MemoryContext:
        """Recall for the goal; a memory that cannot be read leaves the run without it, with a warning."""
        from tether.runtime.project import project_of

        try:
            project = self.project if self.project is not None else project_of(run.workspace)
            recall = self.cycle.read(run.goal, run.run_id, project, sources=self.sources)
        except (TetherError, OSError, ValueError) as e:
            log.warning("memory recall failed, so run %s goes without memory: %s", run.run_id, e)
            return MemoryContext()
        write_atomic(run.run_dir / RECALL_FILE, recall.model_dump_json(indent=2))
        cfg = self.config.memory
        text = recall.prompt(cfg.recall_item_chars, cfg.recall_total_chars)
        return MemoryContext(text=text, lesson_ids=[x.id for x in recall.lessons if f"[{x.id}]" in text])

    def after_run(self, record: RunRecord, model: BaseChatModel) -> dict[str, Any]:
        if not self.learn:
            return {}
        recall_path = record.run_dir / RECALL_FILE
        try:
            recall = Recall.model_validate_json(recall_path.read_bytes()) if recall_path.is_file() else None
            report = self.cycle.after_run(memory_record(record), model, recall)
        except (TetherError, OSError, ValueError) as e:
            # The run's outcome stands; the failure is reported, not hidden.
            log.error("memory cycle failed for run %s: %s", record.run_id, e)
            out: dict[str, Any] = {"memory_error": str(e)}
        else:
            out = {
                "lessons_used": report.used_lessons,
                "lessons_revised": [
                    {"id": s.target, "verdict": s.verdict, "status": s.status, "detail": s.detail}
                    for s in report.steps if s.step == "revise"
                ],
                "lessons_written": report.new_lessons,
                "rules_fired": [r.id for r in recall.rules] if recall else [],
                "rules_tried": [r.id for r in recall.rules if r.trial] if recall else [],
                "rule_trial_draw": recall.trial_draw if recall else None,
                "memory_calls": len(report.calls),
                "memory_tokens": report.tokens,
            }
            if report.commit:
                out["memory_commit"] = report.commit
        write_atomic(record.run_dir / REPORT_FILE, json.dumps(out, indent=2))
        return out
