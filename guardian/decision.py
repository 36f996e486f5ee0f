"""Decisions, plain hits and the analysis limits, without pydantic (the hook path imports this).

Parts:
    Decision, SEVERITY, strictest: allow < ask < deny.
    Hit: one rule that fired (the plain form of `verdict.RuleHit`).
    Where: workspace, working directory and home of one check, and whether it
        runs in Tether's own sandbox (see `verdict.CheckContext.sandbox`).
    Limits / LIMITS: time budget, payload depth and minimum write depth
        (`config.GuardianConfig` takes its defaults from LIMITS).
"""

from __future__ import annotations

from pathlib import Path

from tether.common.record import dataclass

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from typing import Literal

    Decision = Literal["allow", "ask", "deny"]
else:
    Decision = str  # what the annotations name at run time (they are strings; nothing validates against it)
SEVERITY: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}


def strictest(*decisions: Decision) -> Decision:
    """The most restrictive of the decisions (allow < ask < deny)."""
    return max(decisions, key=SEVERITY.__getitem__, default="allow")


@dataclass(frozen=True, slots=True)
class Hit:
    """One risk pattern that matched (see `verdict.RuleHit`)."""

    id: str
    category: str
    program: str
    decision: Decision
    reason: str

    @property
    def kind(self) -> str:
        return f"{self.category}:{self.program}" if self.program else self.category


@dataclass(frozen=True, slots=True)
class Where:
    """Where a command would run (see `verdict.CheckContext`)."""

    workspace: Path
    cwd: Path | None = None
    home: Path = Path("/home/tether")
    sandbox: bool = False
    files: Path | None = None

    @property
    def working_dir(self) -> Path:
        return self.cwd or self.workspace


@dataclass(frozen=True, slots=True)
class Limits:
    """Analysis limits (see `config.GuardianConfig`)."""

    time_budget_ms: float = 250.0
    max_depth: int = 8
    min_write_depth: int = 3
    wall_budget_ms: float = 5000.0


LIMITS = Limits()


@dataclass(slots=True)
class Result:
    """A verdict in plain data (see `verdict.Verdict`)."""

    decision: Decision
    hits: list[Hit]
    reason: str
    decoded: list[str]
    volatile: bool = False
    """It depends on a file read from disk (a package.json script): not to be cached."""

    @property
    def rules(self) -> list[str]:
        return [h.id for h in self.hits]
