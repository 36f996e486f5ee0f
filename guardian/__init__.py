"""Bash risk guardian (fail-closed) and the R01-R18 completion gate.

Public API (imported lazily, so `import guardian` stays cheap: the
`tether guard` hook path uses `guardian.judge` without pydantic):
    check(command, context, config=None) -> Verdict
    CheckContext, Verdict, RuleHit, GuardianConfig
    DESTRUCTIVE_CATEGORIES: categories never auto-approved by the trust ledger.
    all_rules() -> list of every risk rule (id, category, decision, ...).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from guardian.checker import check
    from guardian.config import GuardianConfig
    from guardian.rules import Rule, all_rules
    from guardian.verdict import CheckContext, Decision, RuleHit, Verdict

DESTRUCTIVE_CATEGORIES: frozenset[str] = frozenset({
    "filesystem-destruction", "device-write", "credential-access", "privilege-escalation",
    "reverse-shell", "resource-exhaustion", "container-escape", "exfiltration",
    "command-escape",
})

__all__ = ["DESTRUCTIVE_CATEGORIES", "CheckContext", "Decision", "GuardianConfig", "Rule",
           "RuleHit", "Verdict", "all_rules", "check"]
_WHERE = {"check": "guardian.checker", "all_rules": "guardian.rules", "Rule": "guardian.rules",
          "GuardianConfig": "guardian.config", "CheckContext": "guardian.verdict",
          "Decision": "guardian.verdict", "RuleHit": "guardian.verdict", "Verdict": "guardian.verdict"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name]), name)
    msg = f"module 'guardian' has no attribute {name!r}"
    raise AttributeError(msg)
