"""What the cycle returns and what the agent is shown.

Parts: `RecalledLesson`, `RecalledRule`, `RecalledRun`, `Recall` (the read
step's result, with `prompt()` rendering it and the WikiTrace descent rules),
`StepResult`, `CycleReport` (the write steps' result).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from memory.lesson import MOUNT, Verdict
from memory.llm import Call
from memory.run import Outcome

DESCENT_RULES = f"""How to use memory. The memory folder is mounted read-only at {MOUNT}; read it
with ordinary commands (cat, grep). Only the raw turns (trajectory.md) are certain;
lessons and compilations are readings of them.
Go down to a lesson's source run (its compilation, then its raw trajectory) when:
- the lesson says what to do but not exactly how;
- the lesson came from a failed run;
- two lessons disagree.
Check this before your first action for the lessons you will rely on, and again
whenever an action fails. Look there for the one fact that settles it, such as a
command format.
Memory rules:
- Never replay a past run. It started from a different state than this task, even
  when its task reads the same, and steps that worked there can fail here.
- Take from a run only a fact you can check against this task. Name what differs
  before you use it.
- From a failed run, take only the action to avoid, never the plan.
- When you rely on a lesson, cite its id (e.g. "per L-1a2b3c4d") in your reasoning:
  cited lessons are checked against this run's outcome and revised."""


class RecalledLesson(BaseModel):
    """A lesson as the agent receives it."""

    id: str
    title: str
    insight: str
    applicability: str
    source_run: str
    source_outcome: Outcome
    score: float = 0.0
    project: str = ""
    confirmations: int = 0
    """Accepted `confirmed` verdicts since its text last changed (ranking boosts them)."""

    @property
    def compilation(self) -> str:
        return f"{MOUNT}/runs/{self.source_run}/compilation.md"

    @property
    def trajectory(self) -> str:
        return f"{MOUNT}/runs/{self.source_run}/trajectory.md"


class RecalledRule(BaseModel):
    """A prevention rule put into the prompt."""

    id: str
    text: str
    tool: str
    confidence: float
    trial: bool = False
    """Injected below the threshold so that it can earn credit (see docs/memory.md)."""


class RecalledRun(BaseModel):
    """A similar past run (an episode)."""

    run_id: str
    goal: str
    outcome: Outcome
    score: int

    @property
    def trajectory(self) -> str:
        return f"{MOUNT}/runs/{self.run_id}/trajectory.md"


class Recall(BaseModel):
    """What memory hands the agent before it plans."""

    goal: str
    lessons: list[RecalledLesson] = Field(default_factory=list)
    rules: list[RecalledRule] = Field(default_factory=list)
    runs: list[RecalledRun] = Field(default_factory=list)
    project: str = ""
    """The project the run works on; new lessons and rules carry it."""
    trial_draw: float | None = None
    """This run's rule-trial draw (seeded by the run id); a trial happens below rule_trial_rate."""
    sources: bool = True
    """False for the lessons-only baseline: no source links, past runs or descent rules."""

    @property
    def lesson_ids(self) -> list[str]:
        return [x.id for x in self.lessons]

    def prompt(self, item_chars: int = 600, total_chars: int = 8000) -> str:
        """The memory block of the agent's first message.

        Each text is cut to `item_chars` and entries stop at `total_chars`, so no
        past run (a huge goal, a long edited lesson) crowds out the new task.
        """
        if not self.sources:
            return self._lessons_only()
        if not (self.lessons or self.rules or self.runs):
            return f"Memory: nothing relevant yet.\n\n{DESCENT_RULES}\n"

        def cut(text: str) -> str:
            text = " ".join(text.split())
            return text if len(text) <= item_chars else text[: item_chars - 1] + "…"

        sections: list[tuple[str, list[str]]] = [
            ("Lessons from past runs:", [
                f"- [{x.id}] {cut(x.insight)}\n  Applies: {cut(x.applicability) or 'not stated'}\n"
                f"  Source: run {x.source_run} ({x.source_outcome}); compilation {x.compilation}; "
                f"raw turns {x.trajectory}" for x in self.lessons]),
            ("Prevention rules (learnt from repeated errors):", [
                f"- [{r.id}] {cut(r.text)} (tool {cut(r.tool)}, confidence {r.confidence:.2f})" for r in self.rules]),
            ("Similar past runs:", [
                f"- run {r.run_id} ({r.outcome}, score {r.score:+d}): {cut(r.goal)} — {r.trajectory}" for r in self.runs]),
        ]
        parts: list[str] = []
        used, left_out = 0, 0
        for heading, entries in sections:
            kept = []
            for entry in entries:
                if used + len(entry) > total_chars:
                    left_out += 1
                    continue
                kept.append(entry)
                used += len(entry)
            parts += [heading, *kept] if kept else []
        if left_out:
            parts.append(f"({left_out} more memory item(s) left out to keep this block short; grep {MOUNT} for more)")
        return "\n".join(parts) + f"\n\n{DESCENT_RULES}\n"


    def _lessons_only(self) -> str:
        """The WikiTrace "Insights Only" control: the same lessons, nothing to descend to."""
        parts = ["Lessons from past runs:" if self.lessons else "Memory: no lessons yet."]
        parts += [f"- [{x.id}] {x.insight}\n  Applies: {x.applicability or 'not stated'}" for x in self.lessons]
        if self.rules:
            parts.append("Prevention rules (learnt from repeated errors):")
            parts += [f"- [{r.id}] {r.text} (tool {r.tool}, confidence {r.confidence:.2f})" for r in self.rules]
        return "\n".join(parts) + "\n"


class StepResult(BaseModel):
    """One memory step's fate."""

    model_config = ConfigDict(extra="forbid")

    step: Literal["trajectory", "compile", "revise", "counterfactual", "lessons", "rule", "credit"]
    target: str = ""
    """The lesson, rule or run it concerned."""
    status: Literal["ok", "rejected", "skipped", "error"]
    detail: str = ""
    verdict: Verdict | None = None


class CycleReport(BaseModel):
    """What `after_run` did, for the run journal and the cost bench."""

    run_id: str
    used_lessons: list[str] = Field(default_factory=list)
    """Retrieved lessons the run relied on (revised)."""
    unused_lessons: list[str] = Field(default_factory=list)
    """Retrieved lessons the run never relied on (not revised: the saving)."""
    new_lessons: list[str] = Field(default_factory=list)
    rules_created: list[str] = Field(default_factory=list)
    rules_updated: list[str] = Field(default_factory=list)
    steps: list[StepResult] = Field(default_factory=list)
    calls: list[Call] = Field(default_factory=list)

    @property
    def tokens(self) -> int:
        return sum(c.input_tokens + c.output_tokens for c in self.calls)
