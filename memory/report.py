"""What the cycle returns and what the agent is shown.

Parts: `RecalledLesson`, `RecalledRule`, `RecalledRun`, `Recall` (the read
step's result, with `prompt()` rendering it and the WikiTrace descent rules),
`StepResult`, `CycleReport` (the write steps' result).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tether.memory.lesson import MOUNT, Verdict
from tether.memory.llm import Call
from tether.memory.run import Outcome

DESCENT_RULES = f"""Memory is mounted read-only at {MOUNT} (cat, grep). Only a run's raw turns
(trajectory.md) are certain; lessons and compilations are readings of them.
Go down to a lesson's source run (compilation, then trajectory) when it says what
to do but not exactly how, when it came from a failed run, or when two lessons
disagree. Check this before your first action for the lessons you will rely on,
and again whenever an action fails; look for the one fact that settles it, such
as a command format.
- Never replay a past run: it started from another state, even when its task reads the same.
- Take from a run only a fact you can check against this task; name what differs first.
- From a failed run take only the action to avoid, never the plan.
- Cite the id of each lesson you rely on (e.g. "per L-1a2b3c4d"): cited lessons are revised."""


class RecalledLesson(BaseModel):
    """A lesson as the agent receives it."""

    id: str
    title: str
    insight: str
    applicability: str
    source_run: str
    """Empty for a lesson a person wrote."""
    source_outcome: Outcome | None = None
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
        Without `sources` (the WikiTrace "Insights Only" control) the same
        lessons come without source links, past runs or descent rules.
        """
        if not (self.lessons or self.rules or (self.runs and self.sources)):
            return "Memory: nothing relevant yet.\n"  # nothing to descend to: the rules would be noise

        def cut(text: str) -> str:
            text = " ".join(text.split())
            return text if len(text) <= item_chars else text[: item_chars - 1] + "…"

        def source(x: RecalledLesson) -> str:
            if not x.source_run:
                return "\n  Source: written by a person (no source run)" if self.sources else ""
            return f"\n  Source: {MOUNT}/runs/{x.source_run}/ ({x.source_outcome}; compilation.md, trajectory.md)" \
                if self.sources else ""

        sections: list[tuple[str, list[str]]] = [
            ("Lessons from past runs:", [
                f"- [{x.id}] {cut(x.insight)}\n  Applies: {cut(x.applicability) or 'not stated'}{source(x)}"
                for x in self.lessons]),
            ("Prevention rules (learnt from repeated errors):", [
                f"- [{r.id}] {cut(r.text)} (tool {cut(r.tool)}, confidence {r.confidence:.2f})" for r in self.rules]),
            ("Similar past runs:", [
                f"- run {r.run_id} ({r.outcome}, score {r.score:+d}): {cut(r.goal)} — {r.trajectory}"
                for r in (self.runs if self.sources else [])]),
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
            parts.append(f"({left_out} more memory item(s) left out to keep this block short"
                         + (f"; grep {MOUNT} for more)" if self.sources else ")"))
        return "\n".join(parts) + (f"\n\n{DESCENT_RULES}\n" if self.sources else "\n")


class StepResult(BaseModel):
    """One memory step's fate."""

    model_config = ConfigDict(extra="forbid")

    step: Literal["trajectory", "compile", "revise", "counterfactual", "lessons", "rule", "credit"]
    target: str = ""
    """The lesson, rule or run it concerned."""
    status: Literal["ok", "rejected", "skipped", "error", "proposed"]
    """`proposed`: an accepted verdict on a pinned lesson, waiting for `tether memory accept`."""
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
    commit: str = ""
    """The git commit of this run's memory changes (memory.auto_commit), empty when none."""

    @property
    def tokens(self) -> int:
        return sum(c.input_tokens + c.output_tokens for c in self.calls)
