"""Verdicts built from the guardian's own models, shared by the trust tests."""

from tether.guardian.verdict import RuleHit, Verdict


def hit(category: str, program: str = "", decision: str = "ask") -> RuleHit:
    return RuleHit(id="T-001", category=category, program=program, decision=decision, reason="test")


def ask(*kinds: str) -> Verdict:
    """An ask verdict with one asking hit per `category:program` kind."""
    hits = [hit(*k.split(":", 1)) if ":" in k else hit(k) for k in kinds]
    return Verdict(decision="ask", hits=hits, reason="test")
