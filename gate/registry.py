"""The requirements registry: a requirement is one function from evidence to a status and a reason.

Parts: `requirement(id, title)` (the decorator that registers a check),
`Requirement` and `GateReport` (data), `registered()` (every requirement, in
id order) and `check_gate(evidence)`. Requirements live in
`gate.requirements.*`; adding R19 is one decorated function there and one
test row. A requirement that does not apply to a run is `n/a`, never a
silent pass.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from tether.gate.evidence import Evidence
from tether.gate.proof import proof

Status = Literal["pass", "fail", "n/a"]
Result = tuple[Status, str]
Check = Callable[[Evidence], Result]


@dataclass(frozen=True)
class Registered:
    id: str
    title: str
    check: Check


_REGISTRY: dict[str, Registered] = {}


def requirement(rid: str, title: str) -> Callable[[Check], Check]:
    """Register `fn(evidence) -> (status, reason)` as requirement `rid` (ids are unique)."""

    def deco(fn: Check) -> Check:
        if rid in _REGISTRY and _REGISTRY[rid].check is not fn:
            msg = f"gate requirement {rid} is registered twice ({_REGISTRY[rid].check.__qualname__}, {fn.__qualname__})"
            raise ValueError(msg)
        _REGISTRY[rid] = Registered(rid, title, fn)
        return fn

    return deco


def registered() -> list[Registered]:
    """Every requirement, R01 first."""
    import tether.gate.requirements  # noqa: F401  (the modules register themselves on import)

    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


class Requirement(BaseModel):
    id: str
    title: str
    status: Status
    evidence: str


class GateReport(BaseModel):
    results: list[Requirement]
    review: list[str] = []
    """Why a person must look before this counts as success (tests the run tampered with)."""
    review_diff: str = ""
    checks: list[dict] = []
    """The checks the gate re-ran, with their results before and after the run."""
    project: list[dict] = []
    """The project's own tests, per test id, before and after the run."""
    proof: str = "none"
    """Where the proof that the change works came from: person, project, run or none (gate.proof)."""
    proof_detail: str = ""
    self_verified: bool = False
    """The only proof is checks the run wrote itself (and the person did not accept that as success)."""

    @property
    def needs_review(self) -> bool:
        return bool(self.review)

    @property
    def passed(self) -> bool:
        return all(r.status != "fail" for r in self.results)

    @property
    def failed(self) -> list[str]:
        return [r.id for r in self.results if r.status == "fail"]


def check_gate(evidence: Evidence) -> GateReport:
    """Judge the evidence against every registered requirement."""
    results = []
    for req in registered():
        status, why = req.check(evidence)
        results.append(Requirement(id=req.id, title=req.title, status=status, evidence=why))
    checks = [c.model_dump(exclude={"after_output"}) for c in evidence.checks]
    source, detail = proof(evidence)
    return GateReport(results=results, review=evidence.review, review_diff=evidence.review_diff, checks=checks,
                      project=[t.model_dump() for t in evidence.project], proof=source, proof_detail=detail,
                      self_verified=source == "run" and not evidence.accept_self_verified)
