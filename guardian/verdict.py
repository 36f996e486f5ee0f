"""Verdicts are data: a decision, the rules that fired, and why."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from tether.guardian.decision import SEVERITY, Result, strictest

Decision = Literal["allow", "ask", "deny"]
"""The same three as `decision.Decision`, as typing's Literal: pydantic validates against it."""

__all__ = ["SEVERITY", "CheckContext", "Decision", "RuleHit", "Verdict", "strictest"]


class CheckContext(BaseModel):
    """Where a command would run: resolves relative, `~` and `$HOME` paths."""

    workspace: Path
    cwd: Path | None = None
    """Defaults to the workspace."""
    home: Path = Path("/home/tether")
    sandbox: bool = False
    """True: the command runs in Tether's own sandbox (a run's disposable container, whose workspace the run
    snapshotted), not on the person's machine (`tether guard`, the agent hooks). Its processes and installed
    packages are the sandbox's, its network is a per-command grant, and rollback brings back any file of the
    workspace; `sandbox_context` relaxes the asks that only guard those (`pkill`, named installs, discarding a
    named file's edits)."""
    files: Path | None = None
    """The folder on this machine that holds the workspace's files, when the command sees them elsewhere (Tether's
    sandbox mounts them at `workspace`); None: `workspace` itself. Read only for a package.json script's body."""

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

    @classmethod
    def of(cls, result: Result) -> Verdict:
        """The pydantic form of a plain `decision.Result`."""
        hits = [RuleHit(id=h.id, category=h.category, program=h.program, decision=h.decision,
                        reason=h.reason) for h in result.hits]
        return cls(decision=result.decision, hits=hits, reason=result.reason,
                   decoded=list(result.decoded))

    @property
    def kinds(self) -> list[str]:
        return sorted({h.kind for h in self.hits if h.decision != "allow"})
