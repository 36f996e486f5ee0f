"""Bash risk guardian (fail-closed) and the R01-R18 completion gate.

Public API (imported lazily, so `import guardian` stays cheap):
    check(command, context, config=None) -> Verdict
    CheckContext, Verdict, RuleHit, GuardianConfig
    DESTRUCTIVE_CATEGORIES: categories never auto-approved by the trust ledger.
    all_rules() -> list of every risk rule (id, category, decision, ...).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from guardian.config import GuardianConfig
from guardian.verdict import CheckContext, Decision, RuleHit, Verdict

if TYPE_CHECKING:
    from guardian.checker import check
    from guardian.rules import Rule, all_rules

DESTRUCTIVE_CATEGORIES: frozenset[str] = frozenset({
    "filesystem-destruction", "device-write", "credential-access", "privilege-escalation",
    "reverse-shell", "resource-exhaustion", "container-escape", "exfiltration",
    "command-escape",
})

__all__ = ["DESTRUCTIVE_CATEGORIES", "CheckContext", "Decision", "GuardianConfig", "Rule",
           "RuleHit", "Verdict", "all_rules", "check"]


def __getattr__(name: str) -> Any:
    if name == "check":
        from guardian.checker import check

        return check
    if name in ("all_rules", "Rule"):
        from guardian import rules

        return getattr(rules, name)
    msg = f"module 'guardian' has no attribute {name!r}"
    raise AttributeError(msg)
