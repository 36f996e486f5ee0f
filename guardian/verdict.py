"""Verdicts are data: a decision, the rules that fired, and why."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

Decision = Literal["allow", "ask", "deny"]
SEVERITY: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}


def strictest(*decisions: Decision) -> Decision:
    """The most restrictive of the decisions (allow < ask < deny)."""
    return max(decisions, key=SEVERITY.__getitem__, default="allow")


class CheckContext(BaseModel):
    """Where a command would run: resolves relative, `~` and `$HOME` paths."""

    workspace: Path
    cwd: Path | None = None
    """Defaults to the workspace."""
    home: Path = Path("/home/tether")

    @property
    def working_dir(self) -> Path:
        return self.cwd or self.workspace


class RuleHit(BaseModel):
    """One risk pattern that matched."""

    id: str
    """Stable rule id, e.g. `FS-001`, or `GUARD-FAIL`."""
    category: str
    """Risk category, e.g. `filesystem-destruction`, `package-install`."""
    program: str = ""
    """The program the rule matched on, e.g. `pip` (empty when not tied to one)."""
    decision: Decision
    reason: str

    @property
    def kind(self) -> str:
        """Action kind for the trust ledger: `category:program`."""
        return f"{self.category}:{self.program}" if self.program else self.category


class Verdict(BaseModel):
    """The guardian's answer for one command."""

    decision: Decision
    hits: list[RuleHit] = Field(default_factory=list)
    reason: str = ""
    decoded: list[str] = Field(default_factory=list)
    """Every form of the command that was analysed (raw first)."""

    @property
    def rules(self) -> list[str]:
        return [h.id for h in self.hits]

    @property
    def kinds(self) -> list[str]:
        return sorted({h.kind for h in self.hits if h.decision != "allow"})
