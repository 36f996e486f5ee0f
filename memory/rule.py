"""A prevention rule, its confidence arithmetic, error signatures, and rules/<id>.md.

Parts: `normalize_error`, `error_signature` (SHA256 of tool + normalised
error), `Rule`, `fold_confidence` (confidence as a pure function of the runs
a rule applied to, so forgetting a run can recompute it), `rule_to_markdown`,
`rule_from_markdown`, `current_confidence` (the earned confidence faded by
idle time since the rule's last use: above the injection threshold only the
margin halves per `rule_half_life_days`, below it the whole value).
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tether.common.projectid import portable_project
from tether.memory.config import MemoryConfig
from tether.memory.errors import MemoryStoreError
from tether.memory.files import join_front_matter, render_sections, sections, split_front_matter
from tether.memory.run import Outcome

_NORMALISERS = (
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I), "<uuid>"),
    (re.compile(r"\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:z|[+-]\d{2}:?\d{2})?", re.I), "<time>"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}:\d{2}(?::\d{2})?\b"), "<time>"),
    (re.compile(r"\b0x[0-9a-f]+\b|\b[0-9a-f]{7,}\b", re.I), "<hex>"),
    (re.compile(r"(?:~|\.{1,2})?(?:/[\w.@+-]+)+/?|\b[a-z]:\\[\w\\. -]+", re.I), "<path>"),
    (re.compile(r"\b\d+(?:\.\d+)*\b"), "<n>"),
)


def normalize_error(text: str) -> str:
    """Error text with paths, numbers, hex ids, timestamps and uuids replaced by placeholders."""
    text = text.strip().lower()
    for pattern, placeholder in _NORMALISERS:
        text = pattern.sub(placeholder, text)
    return re.sub(r"\s+", " ", text).strip()


def error_signature(tool: str, error: str) -> str:
    """SHA256 hex of the tool name and the normalised error: the same mistake hashes the same."""
    return hashlib.sha256(f"{tool.strip().lower()}\n{normalize_error(error)}".encode()).hexdigest()


class Application(BaseModel):
    """A run the rule applied to, and what that meant for the rule."""

    model_config = ConfigDict(extra="forbid")

    run: str
    outcome: Outcome
    at: datetime | None = None
    """When that run finished (None in rules written before decay existed)."""


class Rule(BaseModel):
    """A one-line prevention rule learnt from a repeated error."""

    model_config = ConfigDict(extra="forbid")

    id: str
    signature: str
    tool: str
    status: Literal["live", "retired"] = "live"
    confidence: float
    hits: int = 0
    """Runs in which the error occurred."""
    successes: int = 0
    failures: int = 0
    first_seen: datetime
    last_seen: datetime
    source_runs: list[str] = Field(default_factory=list)
    applied: list[Application] = Field(default_factory=list)
    edited: datetime | None = None
    """When a person last changed the text in MEMORY.md."""
    last_tried: datetime | None = None
    """When a run last carried the rule in its prompt (on trial or above the threshold)."""
    project: str = ""
    """The project of the run that first hit the error (git remote, or `local:<folder>-<digest>`)."""
    text: str
    error: str = ""
    """The normalised error text the signature hashes."""

    def index_text(self) -> str:
        return f"{self.tool}\n{self.text}\n{self.error}"


def rule_id(signature: str) -> str:
    return f"rule-{signature[:12]}"


def fold_confidence(applied: list[Application], config: MemoryConfig) -> float:
    """Start at the initial confidence, then +success / -failure per application, clamped to [0, 1]."""
    value = config.rule_initial_confidence
    for a in applied:
        delta = config.rule_success_delta if a.outcome == "success" else -config.rule_failure_delta
        value = min(1.0, max(0.0, value + delta))
    return round(value, 4)


def last_use(rule: Rule) -> datetime:
    """The rule's last use: its last application, or the last time its error happened."""
    return max([rule.first_seen, rule.last_seen, *(a.at for a in rule.applied if a.at is not None)])


def current_confidence(rule: Rule, config: MemoryConfig, now: datetime | None) -> float:
    """The confidence in force: the earned one, faded by idle time since the last use.

    Idleness is no evidence against a rule, only failures are. So for a rule
    that earned the injection threshold or more, only the margin above the
    threshold halves per `rule_half_life_days`: it ranks below fresher rules
    but never leaves prompts by idling (0.65 is 0.636 after 14 idle days,
    0.6125 after 60). A rule below the threshold, which never earned its place,
    halves as a whole and retires below `rule_retire_below`.
    """
    value = fold_confidence(rule.applied, config)
    half_life = config.rule_half_life_days
    if now is None or not half_life:
        return value
    idle_days = max(0.0, (now - last_use(rule)).total_seconds() / 86400)
    fade = 0.5 ** (idle_days / half_life)
    floor = config.rule_inject_threshold
    if value >= floor:
        return max(floor, round(floor + (value - floor) * fade, 4))
    return round(value * fade, 4)


def refresh(rule: Rule, config: MemoryConfig, now: datetime | None = None) -> Rule:
    """Recompute confidence (faded to `now` when given), counts and status from the applications."""
    confidence = current_confidence(rule, config, now)
    return rule.model_copy(update={
        "confidence": confidence,
        "successes": sum(a.outcome == "success" for a in rule.applied),
        "failures": sum(a.outcome == "failure" for a in rule.applied),
        "status": "retired" if confidence < config.rule_retire_below else "live",
        "hits": len(rule.source_runs),
    })


def rule_to_markdown(rule: Rule) -> str:
    meta = rule.model_dump(mode="json", exclude={"text", "error"}, exclude_none=True)
    body = render_sections(f"Rule {rule.id}", [("Rule", rule.text), ("Error", f"`{rule.tool}`: {rule.error}")])
    return join_front_matter(meta, body)


def rule_from_markdown(text: str, where: Path | str = "<rule>") -> Rule:
    meta, body = split_front_matter(text, where)
    parts = sections(body)
    error = parts.get("Error", "")
    error = error.split(": ", 1)[1] if ": " in error else error
    try:
        return Rule.model_validate({**meta, "project": portable_project(str(meta.get("project") or "")),
                                    "text": parts.get("Rule", "").strip(), "error": error})
    except ValidationError as e:
        msg = f"{where}: not a valid rule ({e.errors()[0]['msg']}); fix or delete the file"
        raise MemoryStoreError(msg) from e
