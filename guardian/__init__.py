"""Bash risk guardian (fail-closed) and the R01-R18 completion gate.

Public API (imported lazily, so `import guardian` stays cheap: the
`tether guard` hook path uses `guardian.judge` without pydantic):
    check(command, context, config=None) -> Verdict
    CheckContext, Verdict, RuleHit, GuardianConfig
    DESTRUCTIVE_CATEGORIES: categories never auto-approved by the trust ledger (a failure of the
        guardian itself among them), whatever the approvals.
    all_rules() -> list of every risk rule (id, category, decision, ...).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from typing import Any

    from tether.guardian.checker import check
    from tether.guardian.config import GuardianConfig
    from tether.guardian.rules import Rule, all_rules
    from tether.guardian.verdict import CheckContext, Decision, RuleHit, Verdict

DESTRUCTIVE_CATEGORIES: frozenset[str] = frozenset({
    "filesystem-destruction", "device-write", "credential-access", "privilege-escalation",
    "reverse-shell", "resource-exhaustion", "container-escape", "exfiltration",
    "command-escape", "guardian-failure",
})

__all__ = ["DESTRUCTIVE_CATEGORIES", "CheckContext", "Decision", "GuardianConfig", "Rule",
           "RuleHit", "Verdict", "all_rules", "check"]
_WHERE = {
    "check": "tether.guardian.checker",
    "all_rules": "tether.guardian.rules",
    "Rule": "tether.guardian.rules",
    "GuardianConfig": "tether.guardian.config",
    "CheckContext": "tether.guardian.verdict",
    "Decision": "tether.guardian.verdict",
    "RuleHit": "tether.guardian.verdict",
    "Verdict": "tether.guardian.verdict",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name]), name)
    msg = f"module 'tether.guardian' has no attribute {name!r}"
    raise AttributeError(msg)
