"""Shadow audit: what the guardian and the ledger would have done, and how the
auto-approver agreed with the person.

Parts: `ShadowRecord` (one command seen in shadow mode), `ShadowRecorder`
(appends records to `<run dir>/shadow.jsonl`), `audit_run` (the per-run
report behind `tether audit`) and `agreement_by_kind` (agreement across all
runs, which the promotion rule reads when `trust.min_shadow_agreement` is set).

Agreement is counted over asks a person answered. `agreement` is the share
where the auto-approver's call (auto-approve or ask) matched the answer
(allow/approve, ask/refuse). `auto_agreement` is the share of the
auto-approver's own approvals the person also approved: the number that
gates promotion, since an ask the auto-approver deferred cannot be wrong.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from tether.common.errors import TetherError
from tether.guardian.verdict import Decision, Verdict
from tether.runtime.run_ids import UnknownRunError, run_dir
from tether.runtime.trust.kinds import verdict_kinds

SHADOW_FILE = "shadow.jsonl"


class ShadowLogError(TetherError, ValueError):
    """A shadow log line cannot be read."""


class ShadowRecord(BaseModel):
    """One command as the shadow run saw it."""

    at: datetime
    run_id: str
    command: str
    verdict: Verdict
    ledger_decision: Decision
    """What the ledger would have enforced (`TrustLedger.shadow_decision`)."""
    person_decision: bool | None = None
    """True approved, False refused, None when nobody was asked."""


class ShadowRecorder:
    """Appends shadow records to `<runs_dir>/<run_id>/shadow.jsonl`, one line per command."""

    def __init__(self, runs_dir: Path) -> None:
        self.runs_dir = runs_dir

    def record(self, run_id: str, command: str, verdict: Verdict, ledger_decision: Decision,
               person_decision: bool | None = None) -> ShadowRecord:
        """Append one record; a single O_APPEND write keeps concurrent lines whole."""
        rec = ShadowRecord(at=datetime.now(UTC), run_id=run_id, command=command, verdict=verdict,
                           ledger_decision=ledger_decision, person_decision=person_decision)
        folder = run_dir(self.runs_dir, run_id)
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / SHADOW_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, (rec.model_dump_json() + "\n").encode())
        finally:
            os.close(fd)
        return rec


def read_shadow(path: Path) -> list[ShadowRecord]:
    """Records of one shadow log; a cut final line (crash) is ignored, others raise."""
    lines = path.read_text(encoding="utf-8").split("\n")
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(ShadowRecord.model_validate_json(line))
        except ValidationError as e:
            if number == len(lines):  # no newline after it: written when the run died
                break
            msg = f"{path}:{number}: unreadable shadow record ({e.errors()[0]['msg']}); fix or delete the line"
            raise ShadowLogError(msg) from e
    return records


class KindAudit(BaseModel):
    """One action kind's shadow decisions and agreement."""

    kind: str
    denies: int = 0
    """Commands the guardian would have denied."""
    asks: int = 0
    """Commands that would have asked a person."""
    auto_approvals: int = 0
    """Asks the ledger would have approved on its own."""
    person_approved: int = 0
    person_refused: int = 0
    compared: int = 0
    """Asks a person answered."""
    agreed: int = 0
    """Of those, where the auto-approver's call matched the answer."""
    auto_calls: int = 0
    """Answered asks the auto-approver would have approved."""
    auto_confirmed: int = 0
    """Of those, approved by the person too."""

    @property
    def agreement(self) -> float | None:
        return self.agreed / self.compared if self.compared else None

    @property
    def auto_agreement(self) -> float | None:
        return self.auto_confirmed / self.auto_calls if self.auto_calls else None


class AuditReport(BaseModel):
    """The shadow report of one run (or of several, for `agreement_by_kind`)."""

    run_id: str
    commands: int = 0
    allows: int = 0
    denies: int = 0
    asks: int = 0
    auto_approvals: int = 0
    compared: int = 0
    agreed: int = 0
    kinds: dict[str, KindAudit] = Field(default_factory=dict)

    @property
    def agreement(self) -> float | None:
        return self.agreed / self.compared if self.compared else None

    def as_json(self) -> dict:
        """The report with its rates, for `--json`."""
        data = self.model_dump(mode="json")
        data["agreement"] = self.agreement
        for kind, audit in self.kinds.items():
            data["kinds"][kind] |= {"agreement": audit.agreement, "auto_agreement": audit.auto_agreement}
        return data


def summarize(run_id: str, records: Iterable[ShadowRecord]) -> AuditReport:
    """Count decisions per run and per kind; a command counts toward each kind it hits."""
    report = AuditReport(run_id=run_id)
    for rec in records:
        decision, auto = rec.verdict.decision, rec.verdict.decision == "ask" and rec.ledger_decision == "allow"
        answered = decision == "ask" and rec.person_decision is not None
        agreed = answered and auto == rec.person_decision
        report.commands += 1
        report.allows += decision == "allow"
        report.denies += decision == "deny"
        report.asks += decision == "ask"
        report.auto_approvals += auto
        report.compared += answered
        report.agreed += agreed
        for kind in verdict_kinds(rec.verdict):
            k = report.kinds.setdefault(kind, KindAudit(kind=kind))
            k.denies += decision == "deny"
            k.asks += decision == "ask"
            k.auto_approvals += auto
            if answered:
                k.person_approved += rec.person_decision is True
                k.person_refused += rec.person_decision is False
                k.compared += 1
                k.agreed += agreed
                k.auto_calls += auto
                k.auto_confirmed += auto and rec.person_decision is True
    return report


def audit_run(runs_dir: Path, run_id: str) -> AuditReport:
    """The shadow report of one run; UnknownRunError when it has no shadow log."""
    path = run_dir(runs_dir, run_id) / SHADOW_FILE
    if not path.is_file():
        msg = f"run {run_id!r} has no shadow log under {runs_dir}; audit a run started with `tether run --shadow`"
        raise UnknownRunError(msg)
    return summarize(run_id, read_shadow(path))


def agreement_by_kind(runs_dir: Path) -> dict[str, KindAudit]:
    """Per-kind shadow counts over every run's `shadow.jsonl` (unreadable logs raise)."""
    records: list[ShadowRecord] = []
    for path in sorted(runs_dir.glob(f"*/{SHADOW_FILE}")):
        records += read_shadow(path)
    return summarize("*", records).kinds

