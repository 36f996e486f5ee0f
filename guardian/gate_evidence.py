"""What the completion gate is given: the run's evidence as plain data.

Parts: `Evidence` and its pieces, `goal_flags()` (does the goal ask for a
change, which artifacts does it name) and `find_secrets()`. The runner builds
an `Evidence` from the journal, the real workspace diff and a final process
listing; nothing here reads the model's words except the summary it checks.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

StepStatus = Literal["pending", "running", "done", "failed", "blocked", "skipped"]


class PlanStepEvidence(BaseModel):
    id: str
    description: str = ""
    depends_on: list[str] = Field(default_factory=list)
    verify: str = ""


class StepEvidence(BaseModel):
    id: str
    status: StepStatus
    reason: str = ""
    commands: list[str] = Field(default_factory=list)
    """Ids of the commands proposed in this step, in order."""


class CommandEvidence(BaseModel):
    id: str
    step: str
    tool: Literal["run_shell", "read_file"] = "run_shell"
    command: str
    cwd: str = "/home/tether/workspace"
    decision: Literal["allow", "ask", "deny"] = "allow"
    """The guardian's verdict."""
    enforced: Literal["allow", "ask", "deny"] = "allow"
    """What was enforced (shadow mode and trust may differ from the verdict)."""
    rules: list[str] = Field(default_factory=list)
    categories: list[str] = Field(default_factory=list)
    approval: Literal["none", "approved", "refused"] = "none"
    executed: bool = False
    exit_code: int | None = None
    output: str = ""
    changed: list[str] = Field(default_factory=list)


class Claim(BaseModel):
    text: str
    command: str | None = None
    """The command the model cites as proof."""


class Budgets(BaseModel):
    steps_used: int = 0
    steps_limit: int = 20
    seconds_used: float = 0.0
    seconds_limit: float = 1800.0
    tokens_used: int = 0
    tokens_limit: int = 500_000
    commands_per_step_limit: int = 12
    max_commands_in_a_step: int = 0


class Evidence(BaseModel):
    """Everything the gate looks at, gathered from the journal and the workspace."""

    goal: str
    wants_change: bool = False
    artifacts: list[str] = Field(default_factory=list)
    """Files the goal names, relative to the workspace."""
    plan: list[PlanStepEvidence] = Field(default_factory=list)
    plan_valid: bool = False
    steps: list[StepEvidence] = Field(default_factory=list)
    commands: list[CommandEvidence] = Field(default_factory=list)
    claimed_reads: list[str] = Field(default_factory=list)
    claimed_changes: list[str] = Field(default_factory=list)
    diff_added: list[str] = Field(default_factory=list)
    diff_modified: list[str] = Field(default_factory=list)
    diff_deleted: list[str] = Field(default_factory=list)
    changed_texts: dict[str, str] = Field(default_factory=dict)
    """Contents (capped) of added and modified files, for the secrets scan."""
    workspace_files: list[str] = Field(default_factory=list)
    """Every file in the workspace at the end."""
    workspace_mount: str = "/home/tether/workspace"
    summary: str | None = None
    summary_files: list[str] = Field(default_factory=list)
    summary_commands: list[str] = Field(default_factory=list)
    claims: list[Claim] = Field(default_factory=list)
    budgets: Budgets = Field(default_factory=Budgets)
    lessons_used: list[str] = Field(default_factory=list)
    lessons_recorded: list[str] = Field(default_factory=list)
    processes: list[str] | None = None
    """Processes left in the sandbox at the end; None when they could not be listed."""

    @property
    def diff(self) -> list[str]:
        return sorted({*self.diff_added, *self.diff_modified, *self.diff_deleted})


_CHANGE_VERBS = re.compile(
    r"\b(create|write|add|fix|change|update|implement|make|edit|refactor|rename|delete|remove|"
    r"generate|build|modify|replace|append|patch|save|port|convert|scaffold)\w*\b",
    re.IGNORECASE,
)
_ARTIFACT = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{0,5})(?![\w/-])")
_NOT_ARTIFACTS = {"e.g", "i.e", "etc.", "a.m", "p.m"}


def goal_flags(goal: str) -> tuple[bool, list[str]]:
    """Whether the goal asks for a change, and the file names it mentions."""
    names = [m.rstrip(".") for m in _ARTIFACT.findall(goal)]
    artifacts = sorted({n for n in names if n.lower() not in _NOT_ARTIFACTS and not n[0].isdigit()})
    return bool(_CHANGE_VERBS.search(goal)), artifacts


SECRET_PATTERNS: dict[str, re.Pattern[str]] = {
    "aws-access-key": re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),
    "private-key": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    "github-token": re.compile(r"\b(ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}\b"),
    "openai-key": re.compile(r"\bsk-(proj-)?[A-Za-z0-9_-]{20,}\b"),
    "slack-token": re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"),
    "generic-secret": re.compile(
        r"(?i)\b(api[_-]?key|secret|token|passwd|password)\b\s*[:=]\s*['\"]?([A-Za-z0-9/+_\-]{20,})"
    ),
}


def _entropy_ok(value: str) -> bool:
    """High-entropy-ish: mixes at least three character classes, not one repeated char."""
    classes = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[/+_\-]"))
    return classes >= 3 and len(set(value)) > 8


def find_secrets(text: str) -> list[str]:
    """Names of the secret patterns found in `text`."""
    found: list[str] = []
    for name, pattern in SECRET_PATTERNS.items():
        for m in pattern.finditer(text):
            if name == "generic-secret" and not _entropy_ok(m.group(2)):
                continue
            found.append(name)
            break
    return found
