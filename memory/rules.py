"""The rule learner: repeated error signatures become one-line prevention rules.

Parts: `select_rules` (what goes into a prompt: rules at or above the
threshold, plus at most one rule on trial), `credit` (confidence moves by the
outcome of runs a rule applied to), `learn` (new rules from signatures seen
twice within the window).

A rule *applies* to a run when it was in that run's prompt and the run used
the rule's tool. Its outcome there is `failure` when the task failed or the
very error it guards against happened again, else `success`.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta

from langchain_core.language_models import BaseChatModel

from common.errors import TetherError
from memory.config import MemoryConfig
from memory.errors import UnknownMemoryItemError
from memory.llm import Call, ask, parse_json
from memory.prompts import rule_prompt
from memory.report import RecalledRule, StepResult
from memory.rule import Application, Rule, error_signature, normalize_error, refresh, rule_id
from memory.run import FailedCommand, RunRecord, program_of
from memory.store import MemoryStore


def _draw(goal: str, rule: Rule) -> float:
    digest = hashlib.sha256(f"{goal}\n{rule.id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") / 2**32


def select_rules(store: MemoryStore, goal: str) -> list[RecalledRule]:
    """Listed live rules with confidence >= threshold (best first), plus at most one on trial."""
    cfg = store.config
    listed = store.manifest().rules
    live = [r for r in store.rules() if r.status == "live" and r.id in listed]
    chosen = sorted((r for r in live if r.confidence >= cfg.rule_inject_threshold), key=lambda r: -r.confidence)
    out = [RecalledRule(id=r.id, text=r.text, tool=r.tool, confidence=r.confidence) for r in chosen[: cfg.rule_max_injected]]
    trials = sorted((_draw(goal, r), r.id, r) for r in live if r.confidence < cfg.rule_inject_threshold)
    if trials and trials[0][0] < cfg.rule_trial_rate:
        r = trials[0][2]
        out.append(RecalledRule(id=r.id, text=r.text, tool=r.tool, confidence=r.confidence, trial=True))
    return out


def signatures(record: RunRecord) -> dict[str, FailedCommand]:
    """Distinct error signatures of a run's failed commands (first occurrence kept)."""
    out: dict[str, FailedCommand] = {}
    for fc in record.failed_commands:
        out.setdefault(error_signature(fc.tool, fc.error), fc)
    return out


def credit(store: MemoryStore, record: RunRecord, injected: list[RecalledRule]) -> list[StepResult]:
    """Move the confidence of every injected rule that applied to this run. Call inside a session."""
    used_tools = {program_of(t.command) for t in record.turns if t.command} | {f.tool for f in record.failed_commands}
    seen = signatures(record)
    steps = []
    for recalled in injected:
        try:
            rule = store.load_rule(recalled.id)
        except UnknownMemoryItemError:
            continue  # forgotten meanwhile
        if rule.tool not in used_tools or any(a.run == record.run_id for a in rule.applied):
            continue
        outcome = "failure" if record.outcome == "failure" or rule.signature in seen else "success"
        before = rule.confidence
        rule = refresh(rule.model_copy(update={"applied": [*rule.applied, Application(run=record.run_id, outcome=outcome)]}), store.config)
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
            store.save_rule(refresh(rule, store.config))
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
        source_runs=[*(r for r, _ in earlier), record.run_id], text=text, error=error,
    )
    detail = f"from runs {json.dumps(rule.source_runs)}"
    return refresh(rule, config), StepResult(step="rule", target=rule.id, status="ok", detail=detail), call
