"""What the runner hands to memory after a task, and how a run is kept on disk.

Parts: `Turn`, `FailedCommand`, `GateSummary`, `RunRecord` (the memory-side
input the runner builds from its journal), `RunMeta` (a stored run's front
matter), `render_trajectory` (runs/<id>/trajectory.md), `trajectory_text`
(the plain text the source-only check searches), `parse_turns` (trajectory.md
back to turns), `program_of`.
"""

from __future__ import annotations

import json
import re
import shlex
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tether.memory.files import join_front_matter

Outcome = Literal["success", "failure"]
RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"


class Turn(BaseModel):
    """One actor turn: why, what ran, and what came back."""

    model_config = ConfigDict(extra="forbid")

    step: str = ""
    """Plan step id the turn belongs to."""
    reasoning: str = ""
    """The model's stated reasoning before the command."""
    command: str = ""
    """The command (or tool call rendered as text) that ran; empty for a thinking turn."""
    exit_code: int | None = None
    """Exit status; None when nothing ran (denied, or a thinking turn)."""
    output: str = ""
    """What the command printed, as the journal kept it."""


class FailedCommand(BaseModel):
    """A command that failed, the input of the rule learner."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    """The program (argv[0], e.g. `pytest`) or non-shell tool name; part of the error signature."""
    command: str = ""
    """The full command, for people reading the rule."""
    error: str
    """Error text (stderr tail or exception message); normalised before hashing."""


class GateSummary(BaseModel):
    """The completion gate's result, as memory needs it."""

    model_config = ConfigDict(extra="forbid")

    passed: bool
    """Whether R01-R18 all held."""
    failed: list[str] = Field(default_factory=list)
    """Ids of the requirements that did not hold (e.g. R08)."""
    notes: str = ""
    """One line on why, for the revise prompt."""


class RunRecord(BaseModel):
    """A finished run as memory sees it; the runner builds it from its journal."""

    model_config = ConfigDict(extra="forbid")

    run_id: str = Field(pattern=RUN_ID_PATTERN)
    """Unique run id; becomes a folder name under runs/."""
    goal: str
    """The task as the user gave it."""
    outcome: Outcome
    """`success` only when the completion gate passed."""
    score: Literal[1, -1] | None = None
    """Episode score; derived from outcome (+1 / -1) when omitted."""
    turns: list[Turn] = Field(default_factory=list)
    """Every turn, in order."""
    gate: GateSummary | None = None
    """Completion gate summary."""
    lessons_used: list[str] = Field(default_factory=list)
    """Lesson ids the agent said it relied on (cited in its reasoning or summary)."""
    failed_commands: list[FailedCommand] = Field(default_factory=list)
    """Failed commands with tool name and error text."""
    summary: str = ""
    """The agent's final summary."""
    finished: datetime | None = None
    """When the run ended (timezone-aware); the cycle's clock when omitted."""
    project: str = ""
    """The project the run worked on (see runtime.project); lessons and rules it teaches carry it."""

    @model_validator(mode="after")
    def _score(self) -> RunRecord:
        if self.score is None:
            self.score = 1 if self.outcome == "success" else -1
        return self


class RunMeta(BaseModel):
    """Front matter of runs/<id>/trajectory.md: the episode and its score."""

    model_config = ConfigDict(extra="ignore")

    run_id: str
    goal: str
    outcome: Outcome
    score: Literal[1, -1]
    finished: datetime
    turns: int = 0
    lessons_used: list[str] = Field(default_factory=list)
    error_signatures: list[str] = Field(default_factory=list)
    gate_passed: bool | None = None
    gate_failed: list[str] = Field(default_factory=list)
    project: str = ""


def program_of(command: str) -> str:
    """The program a shell command runs (skipping `sudo`, `env`, `VAR=x`), for error signatures."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    for word in words:
        if (
            "=" in word
            and not word.startswith(("-", "/"))
            or word in {"sudo", "env", "nohup", "time", "timeout", "command"}
        ):
            continue
        if word.isdigit():
            continue
        return word.rsplit("/", 1)[-1]
    return "shell"


def render_turns(turns: list[Turn]) -> str:
    """Turns as markdown, every field verbatim (outputs fenced)."""
    chunks = []
    for n, t in enumerate(turns, 1):
        head = f"### Turn {n}" + (f" (step {t.step})" if t.step else "")
        lines = [head]
        if t.reasoning:
            lines.append(f"Reasoning: {t.reasoning}")
        if t.command:
            lines += ["Command:", "```sh", t.command, "```"]
        if t.exit_code is not None:
            lines.append(f"Exit code: {t.exit_code}")
        if t.output:
            fence = "````" if "```" in t.output else "```"
            lines += ["Output:", fence, t.output.rstrip("\n"), fence]
        chunks.append("\n".join(lines))
    return "\n\n".join(chunks) + "\n"


def parse_turns(trajectory_md: str) -> list[Turn]:
    """The turns of a trajectory.md, read back from `render_turns`'s form (where trajectory.jsonl is gone)."""
    body = trajectory_md.split("\n## Turns\n", 1)
    if len(body) < 2:
        return []
    turns: list[dict[str, object]] = []
    lines = body[1].splitlines()
    i, field = 0, ""
    while i < len(lines):
        line = lines[i]
        head = re.match(r"^### Turn \d+(?: \(step (.*)\))?$", line)
        if head:
            turns.append({"step": head.group(1) or "", "reasoning": ""})
            field = ""
        elif not turns:
            pass
        elif line.startswith("Reasoning: "):
            turns[-1]["reasoning"], field = line[len("Reasoning: "):], "reasoning"
        elif line in ("Command:", "Output:") and i + 1 < len(lines):
            fence, chunk = lines[i + 1], []
            i += 2
            while i < len(lines) and lines[i] != fence.rstrip("sh"):
                chunk.append(lines[i])
                i += 1
            turns[-1]["command" if line == "Command:" else "output"] = "\n".join(chunk)
            field = ""
        elif line.startswith("Exit code: "):
            turns[-1]["exit_code"], field = int(line[len("Exit code: "):]), ""
        elif field == "reasoning":
            turns[-1]["reasoning"] = f"{turns[-1]['reasoning']}\n{line}"
        i += 1
    out = []
    for t in turns:
        t["reasoning"] = str(t["reasoning"]).rstrip("\n")
        out.append(Turn.model_validate(t))
    return out


def render_trajectory(meta: RunMeta, record: RunRecord) -> str:
    """runs/<id>/trajectory.md: task, outcome and every turn, nothing summarised."""
    gate = ""
    if record.gate is not None:
        gate = (
            f"\n## Gate\npassed: {record.gate.passed}; failed: {', '.join(record.gate.failed) or 'none'}. "
            f"{record.gate.notes}\n"
        )
    summary = f"\n## Summary\n{record.summary}\n" if record.summary else ""
    body = (
        f"# Run {record.run_id}\n\n## Task\n{record.goal}\n\n## Outcome\n{record.outcome} (score {meta.score:+d})\n"
        f"{gate}{summary}\n## Turns\n{render_turns(record.turns)}"
    )
    return join_front_matter(meta.model_dump(mode="json"), body)


def trajectory_jsonl(record: RunRecord) -> str:
    """runs/<id>/trajectory.jsonl: one JSON turn a line, for tools."""
    return "".join(json.dumps(t.model_dump(), ensure_ascii=False) + "\n" for t in record.turns)


def trajectory_text(goal: str, outcome: str, turns: list[Turn]) -> str:
    """The raw run as one text: what evidence quotes and new claims are checked against."""
    parts = [f"task: {goal}", f"outcome: {outcome}"]
    for t in turns:
        parts += [t.reasoning, t.command, t.output]
    return "\n".join(p for p in parts if p)
