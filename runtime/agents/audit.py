"""`tether audit --agents`: how often the guardian and the ledger agreed with what the person did, per agent and kind.

Reads `hook-shadow.jsonl` (written by hooks installed with `--shadow`): per
call, the guardian's decision, the effective one (an ask the ledger would
auto-approve becomes allow) and the outcome (the call ran, or it was refused:
the session's next call came without it). Agreement counts the calls whose
effective decision was allow or deny: allow agrees with ran, deny with
refused; an ask leaves the choice to the person and is counted apart, with
how often the person let it run.

Parts: `KindRow`, `audit_agents`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tether.runtime.agents.learn import SHADOW
from tether.runtime.agents.log import read


@dataclass
class KindRow:
    """One agent's shadow calls of one kind (`-` for calls no rule matched)."""

    calls: int = 0
    would_allow: int = 0
    would_ask: int = 0
    would_deny: int = 0
    would_auto: int = 0
    ran: int = 0
    refused: int = 0
    agreed: int = 0
    compared: int = 0
    asks_ran: int = 0

    @property
    def agreement(self) -> float | None:
        return self.agreed / self.compared if self.compared else None

    def as_json(self) -> dict[str, Any]:
        return asdict(self) | {"agreement": self.agreement}


def audit_agents(home: Path) -> dict[str, dict[str, KindRow]]:
    """agent -> kind -> counts over every shadow record under Tether's home."""
    out: dict[str, dict[str, KindRow]] = {}
    for r in read(home, 0, name=SHADOW):
        agent, effective, outcome = r.get("agent"), r.get("effective"), r.get("outcome")
        if not isinstance(agent, str) or effective not in ("allow", "ask", "deny") or outcome not in ("ran", "refused"):
            continue
        kinds = [k for k in r.get("kinds") or [] if isinstance(k, str)] or ["-"]
        for kind in kinds:
            row = out.setdefault(agent, {}).setdefault(kind, KindRow())
            row.calls += 1
            setattr(row, f"would_{effective}", getattr(row, f"would_{effective}") + 1)
            row.would_auto += effective == "allow" and r.get("decision") == "ask"
            ran = outcome == "ran"
            row.ran += ran
            row.refused += not ran
            if effective == "ask":
                row.asks_ran += ran
            else:
                row.compared += 1
                row.agreed += (effective == "allow") == ran
    return out
