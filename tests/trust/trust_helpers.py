"""Verdicts built from the guardian's own models, shared by the trust tests."""

from tether.guardian.verdict import RuleHit, Verdict


def hit(category: str, program: str = "", decision: str = "ask", rule: str = "T-001") -> RuleHit:
    return RuleHit(id=rule, category=category, program=program, decision=decision, reason="test")


def ask(*kinds: str) -> Verdict:
    """An ask verdict with one asking hit per kind `category:program:RULE:workspace` (no command: the
    narrowest shape, `workspace`), or `category:program` (rule T-001)."""
    hits = []
    for k in kinds:
        parts = k.split(":")
        hits.append(hit(parts[0], parts[1] if len(parts) > 1 else "", "ask", parts[2] if len(parts) > 2 else "T-001"))
    return Verdict(decision="ask", hits=hits, reason="test")
