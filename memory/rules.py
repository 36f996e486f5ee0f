"""The rule learner: repeated error signatures become one-line prevention rules.

Parts: `trial_draw` (the per-run draw, seeded by the run id),
`select_rules` (what goes into a prompt: rules at or above the threshold,
plus at most one rule on trial, the one tried least recently), `credit` (confidence moves by the
outcome of runs a rule applied to), `learn` (new rules from signatures seen
twice within the window).

A rule *applies* to a run when it was in that run's prompt and the run used
the rule's tool. Its outcome there is `failure` when the task failed or the
very error it guards against happened again, else `success`.
"""

from __future__ import annotations

import hashlib
import json
import random
from datetime import UTC, datetime, timedelta

from langchain_core.language_models import BaseChatModel

from tether.common.errors import TetherError
from tether.memory.config import MemoryConfig
from tether.memory.errors import UnknownMemoryItemError
from tether.memory.llm import Call, ask, parse_json
from tether.memory.prompts import rule_prompt
from tether.memory.report import RecalledRule, StepResult
from tether.memory.rule import (
    Application,
    Rule,
    current_confidence,
    error_signature,
    normalize_error,
    refresh,
    rule_id,
)
from tether.memory.run import FailedCommand, RunRecord, program_of
from tether.memory.store import MemoryStore


def trial_draw(run_id: str) -> float:
    """The run's draw in [0, 1): seeded by the run id, so a run and its resume draw the same."""
    return random.Random(hashlib.sha256(run_id.encode()).digest()).random()


def select_rules(
    store: MemoryStore, goal: str, run_id: str = "", project: str = ""
) -> tuple[list[RecalledRule], float]:
    """Listed live rules with faded confidence >= threshold (best first), plus at most one on trial.

    Returns the rules and the run's trial draw. A trial happens when the draw is
    below `rule_trial_rate`; it carries the sub-threshold rule tried least
    recently (never tried first), so repeating one goal still tries every rule.
    Rules of the current project come first among equals.
    """
    cfg, now = store.config, store.clock()
    listed = store.listed().rules
    live = []
    for r in store.rules():
        if r.status == "live" and r.id in listed:
            conf = current_confidence(r, cfg, now)
            if conf >= cfg.rule_retire_below:
                live.append((conf, r))
    chosen = sorted((x for x in live if x[0] >= cfg.rule_inject_threshold),
                    key=lambda x: (-x[0], x[1].project != project, x[1].id))
    out = [RecalledRule(id=r.id, text=r.text, tool=r.tool, confidence=c) for c, r in chosen[: cfg.rule_max_injected]]
    draw = trial_draw(run_id or goal)
    waiting = [x for x in live if x[0] < cfg.rule_inject_threshold]
    if waiting and draw < cfg.rule_trial_rate:
        never = datetime.min.replace(tzinfo=UTC)
        conf, r = min(waiting, key=lambda x: (x[1].last_tried or never, x[1].project != project, x[1].id))
        out.append(RecalledRule(id=r.id, text=r.text, tool=r.tool, confidence=conf, trial=True))
    return out, round(draw, 6)


def signatures(record: RunRecord) -> dict[str, FailedCommand]:
    """Distinct error signatures of a run's failed commands (first occurrence kept)."""
    out: dict[str, FailedCommand] = {}
    for fc in record.failed_commands:
        out.setdefault(error_signature(fc.tool, fc.error), fc)
    return out


def credit(store: MemoryStore, record: RunRecord, injected: list[RecalledRule]) -> list[StepResult]:
    """Note every injected rule as tried, and move the confidence of those that applied. Call inside a session."""
    used_tools = {program_of(t.command) for t in record.turns if t.command} | {f.tool for f in record.failed_commands}
    seen = signatures(record)
    steps = []
    for recalled in injected:
        try:
            rule = store.load_rule(recalled.id)
        except UnknownMemoryItemError:
            continue  # forgotten meanwhile
        finished = record.finished or store.clock()
        if rule.last_tried is None or rule.last_tried < finished:
            rule = rule.model_copy(update={"last_tried": finished})
            store.save_rule(refresh(rule, store.config, finished))
        if rule.tool not in used_tools or any(a.run == record.run_id for a in rule.applied):
            continue
        outcome = "failure" if record.outcome == "failure" or rule.signature in seen else "success"
        before = current_confidence(rule, store.config, finished)
        applied = Application(run=record.run_id, outcome=outcome, at=finished)
        rule = refresh(rule.model_copy(update={"applied": [*rule.applied, applied]}), store.config, finished)
        store.save_rule(rule)
        steps.append(StepResult(step="credit", target=rule.id, status="ok",
                                detail=f"{outcome}: {before:.2f} -> {rule.confidence:.2f} ({rule.status})"))
    return steps


Earlier = list[tuple[str, datetime]]


def pending_rules(store: MemoryStore, record: RunRecord, finished: datetime) -> tuple[list[str], dict[str, Earlier]]:
    """Update rules whose signature recurred; return (updated ids, new signature -> earlier runs).

    Call inside a session. The current run must already be saved.
    """
    window = timedelta(days=store.config.rule_window_days)
    updated, fresh = [], {}
    sigs = signatures(record)
    others = [m for m in store.runs() if m.run_id != record.run_id] if sigs else []
    for sig in sigs:
        try:
            rule = store.load_rule(rule_id(sig))
        except UnknownMemoryItemError:
            earlier = [(m.run_id, m.finished) for m in others
                       if sig in m.error_signatures and abs(m.finished - finished) <= window]
            if earlier:
                fresh[sig] = earlier
            continue
        if record.run_id not in rule.source_runs:
            rule = rule.model_copy(update={"source_runs": [*rule.source_runs, record.run_id],
                                           "last_seen": max(rule.last_seen, finished)})
            store.save_rule(refresh(rule, store.config, finished))
            updated.append(rule.id)
    return updated, fresh


def _rule_text(answer: str) -> str:
    data = parse_json(answer)
    if data and isinstance(data.get("rule"), str):
        answer = data["rule"]
    for line in answer.splitlines():
        line = line.strip().lstrip("-*• ").strip().strip('"').strip()
        if line:
            return line[:200]
    return ""


def write_rule(model: BaseChatModel, record: RunRecord, sig: str, earlier: Earlier, finished: datetime,
               config: MemoryConfig) -> tuple[Rule | None, StepResult, Call | None]:
    """Ask for the one-line rule of a new signature (site `rule`); no lock held during the call."""
    fc = signatures(record)[sig]
    error = normalize_error(fc.error)
    system, user = rule_prompt(fc.tool, error, [fc.command])
    try:
        answer, call = ask(model, "rule", system, user, key=rule_id(sig))
    except TetherError as e:
        return None, StepResult(step="rule", target=rule_id(sig), status="error", detail=str(e)), None
    text = _rule_text(answer)
    if not text:
        return None, StepResult(step="rule", target=rule_id(sig), status="rejected", detail="empty rule text"), call
    rule = Rule(
        id=rule_id(sig), signature=sig, tool=fc.tool, confidence=config.rule_initial_confidence,
        first_seen=min([finished, *(t for _, t in earlier)]), last_seen=finished,
        source_runs=[*(r for r, _ in earlier), record.run_id], text=text, error=error, project=record.project,
    )
    detail = f"from runs {json.dumps(rule.source_runs)}"
    return refresh(rule, config, finished), StepResult(step="rule", target=rule.id, status="ok", detail=detail), call
