"""Trust ledger: approvals per action kind turn into standing permissions.

Parts: `TrustLedger` (load, decide, record, demote, revoke, save, fold_journal),
and `NEVER_PROMOTED` (categories no number of approvals can promote). The
ledger is a TOML file a person can read and edit (runtime.trust.ledger_file,
docs/trust.md); the
promotion rule is SPEC section 5: `promote_after` approvals at a
`promote_rate` approval rate promote a kind, one rollback demotes it.

Answers the per-call hook learned are journaled beside the file (`runtime.trust.answers`) and counted
here on every `load`, in order, as `record(kind, approved, source="person")` counts them.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from filelock import FileLock, Timeout
from pydantic import BaseModel

from tether.common.atomic import write_atomic
from tether.common.errors import TetherError
from tether.guardian import DESTRUCTIVE_CATEGORIES
from tether.guardian.verdict import Decision, Verdict
from tether.runtime.config import TrustConfig
from tether.runtime.trust.kinds import destructive, verdict_kinds
from tether.runtime.trust.ledger_file import (
    Change,
    KindRecord,
    LedgerCorruptError,
    LedgerFile,
    dump_ledger,
    read_ledger,
)

log = logging.getLogger(__name__)

NEVER_PROMOTED: frozenset[str] = DESTRUCTIVE_CATEGORIES
"""Categories whose kinds are never auto-approved, however many approvals (the guardian owns the list)."""

Source = Literal["person", "auto", "shadow"]
MAX_CHANGES = 1000
APPROVALS_FILE = "approvals.jsonl"


class LedgerBusyError(TetherError, TimeoutError):
    """Another process held the ledger lock for too long."""


class UnknownKindError(TetherError, KeyError):
    """The action kind has no entry in the ledger."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


def category_of(kind: str) -> str:
    """`package-install:pip` -> `package-install`."""
    return kind.split(":", 1)[0]


def never_promoted(kind: str) -> bool:
    """True when the kind is destructive: its category, its rule or its shape (`runtime.trust.kinds`)."""
    return destructive(kind, NEVER_PROMOTED)


def _now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


class _Op(BaseModel):
    """A pending mutation, replayed onto the file's latest content at save time."""

    op: Literal["record", "demote", "revoke"]
    kind: str
    at: datetime
    approved: bool = False
    source: Source = "person"
    run_id: str | None = None
    reason: str = ""


class TrustLedger:
    """Approval counters per action kind, the promotion rule, and the file they live in.

    Every mutation is saved at once (re-read, merged and written under a file
    lock), so concurrent runs never lose each other's records. A ledger loaded
    with `load_or_closed` from a corrupt file is *closed*: it auto-approves
    nothing and leaves the file alone.
    """

    def __init__(self, path: Path, config: TrustConfig, *, runs_dir: Path | None = None,
                 data: LedgerFile | None = None, closed_reason: str | None = None) -> None:
        self.path = path
        self.config = config
        self.runs_dir = runs_dir
        self.data = data or LedgerFile()
        self.closed_reason = closed_reason
        """Why this ledger is closed (corrupt file); None when it works."""
        self._pending: list[_Op] = []
        self._agreement: dict[str, float | None] | None = None

    @classmethod
    def load(cls, path: Path, config: TrustConfig, *, runs_dir: Path | None = None) -> TrustLedger:
        """Read the ledger (a missing file is an empty ledger), the hook's journaled answers counted in; raise
        LedgerCorruptError."""
        ledger = cls(path, config, runs_dir=runs_dir, data=read_ledger(path))
        ledger.fold_journal()
        return ledger

    @classmethod
    def load_or_closed(cls, path: Path, config: TrustConfig, *,
                       runs_dir: Path | None = None) -> TrustLedger:
        """Like `load`, but a corrupt file gives a closed ledger carrying the message to print."""
        try:
            return cls.load(path, config, runs_dir=runs_dir)
        except LedgerCorruptError as e:
            return cls(path, config, runs_dir=runs_dir, closed_reason=str(e))

    # ---- decisions -------------------------------------------------------
    def is_promoted(self, kind: str) -> bool:
        """Whether asks of this kind are auto-approved now."""
        rec = self.data.kinds.get(kind)
        return bool(self.closed_reason is None and rec and rec.promoted and not never_promoted(kind))

    def effective_decision(self, verdict: Verdict) -> Decision:
        """The decision to enforce: an ask becomes allow only if every asking kind is promoted.

        `deny` and `allow` pass through untouched; so does everything when closed.
        """
        kinds = verdict_kinds(verdict)
        if verdict.decision != "ask" or not kinds:
            return verdict.decision
        return "allow" if all(self.is_promoted(k) for k in kinds) else "ask"

    def shadow_decision(self, verdict: Verdict) -> Decision:
        """What the auto-approver would do with the shadow-agreement gate lifted.

        Shadow runs record this, so the gate has auto-approvals to measure;
        without it a kind could never earn the agreement it needs.
        """
        kinds = verdict_kinds(verdict)
        if verdict.decision != "ask" or not kinds or self.closed_reason is not None:
            return verdict.decision
        ok = all(self.is_promoted(k) or self._eligible(k, gate=False)[0] for k in kinds)
        return "allow" if ok else "ask"

    def _eligible(self, kind: str, *, gate: bool = True) -> tuple[bool, str]:
        rec = self.data.kinds.get(kind) or KindRecord()
        if never_promoted(kind):
            return False, f"kind {kind} is destructive and never promoted"
        rate, need = rec.streak_rate or 0.0, self.config.promote_after
        if rec.streak_approvals < need or rate < self.config.promote_rate - 1e-9:
            return (
                False,
                f"{rec.streak_approvals} approvals at {rate:.0%} (needs {need} at {self.config.promote_rate:.0%})",
            )
        why = f"{rec.streak_approvals} approvals at {rate:.0%}"
        floor = self.config.min_shadow_agreement
        if gate and floor is not None:
            agreement = self.shadow_agreement().get(kind)
            if agreement is None or agreement < floor - 1e-9:
                return False, f"shadow agreement {agreement} below {floor:.0%}"
            why += f", shadow agreement {agreement:.0%}"
        return True, why

    def shadow_agreement(self) -> dict[str, float | None]:
        """Auto-approver agreement per kind over all runs' shadow audits (read once)."""
        if self._agreement is None:
            from tether.runtime.trust.audit import ShadowLogError, agreement_by_kind

            try:
                found = agreement_by_kind(self.runs_dir) if self.runs_dir else {}
            except ShadowLogError as e:  # fail closed: no agreement, no gated promotion
                log.warning("%s", e)
                found = {}
            self._agreement = {k: a.auto_agreement for k, a in found.items()}
        return self._agreement

    # ---- mutations -------------------------------------------------------
    def record(self, kind_or_verdict: str | Verdict, approved: bool, run_id: str | None = None,
               source: Source = "person") -> list[str]:
        """Count one answer to an ask for each kind involved, log it for the run, and save.

        Returns the kinds recorded (a verdict contributes all its asking kinds).
        """
        kinds = (verdict_kinds(kind_or_verdict) if isinstance(kind_or_verdict, Verdict)
                 else [kind_or_verdict])
        at = _now()
        self._log_run(run_id, [{"at": at.isoformat(), "run_id": run_id, "kind": k,
                                "approved": approved, "source": source} for k in kinds])
        self._commit([_Op(op="record", kind=k, at=at, approved=approved, source=source,
                          run_id=run_id) for k in kinds])
        return kinds

    def demote(self, kind: str, reason: str, run_id: str | None = None) -> None:
        """Count a rollback: the kind loses its promotion and its streak starts over."""
        self._commit([_Op(op="demote", kind=kind, at=_now(), reason=reason, run_id=run_id)])

    def revoke(self, kind: str, reason: str = "revoked by a person") -> None:
        """Withdraw a kind's promotion and streak without counting a rollback."""
        if kind not in self.data.kinds:
            msg = f"unknown action kind {kind!r}; see `tether trust list` for the kinds on record"
            raise UnknownKindError(msg)
        self._commit([_Op(op="revoke", kind=kind, at=_now(), reason=reason)])

    def save(self) -> None:
        """Merge pending mutations into the file's latest content, atomically, under a lock.

        A closed ledger keeps its pending mutations and leaves the file alone.
        """
        if not self._pending or self.closed_reason is not None:
            return
        try:
            self._merge_and_write()
        except Timeout as e:
            msg = f"trust ledger {self.path} stayed locked for 60 s; retry, or remove {e.lock_file} if no run is active"
            raise LedgerBusyError(msg) from e
        self._pending.clear()

    def fold_journal(self) -> int:
        """Count the answers the hook journaled (`runtime.trust.answers`) into the file, then empty the journal;
        how many. Under the ledger's lock, then the journal's; a closed ledger leaves both alone."""
        from tether.runtime.trust import answers

        home = self.path.parent
        if self.closed_reason is not None or not (home / answers.JOURNAL).exists():
            return 0
        try:
            with FileLock(str(self.path) + ".lock", timeout=60), answers.take(home) as (rows, clear):
                if not rows:
                    clear()
                    return 0
                self.data = read_ledger(self.path)
                for row in rows:
                    try:
                        at = datetime.fromtimestamp(float(row["at"]), UTC)
                    except (OverflowError, OSError, ValueError):
                        at = _now()
                    self._apply(_Op(op="record", kind=row["kind"], at=at, approved=row["approved"],
                                    source="person"))
                self.data.changes = self.data.changes[-MAX_CHANGES:]
                write_atomic(self.path, dump_ledger(self.data))
                clear()  # a crash between these two lines would count the journal twice: both are one rename apart
        except Timeout as e:
            msg = f"trust ledger {self.path} stayed locked for 60 s; retry, or remove {e.lock_file} if no run is active"
            raise LedgerBusyError(msg) from e
        return len(rows)

    def _merge_and_write(self) -> None:
        with FileLock(str(self.path) + ".lock", timeout=60):
            try:
                fresh = read_ledger(self.path)
            except LedgerCorruptError as e:
                self.closed_reason = str(e)
                raise
            self.data = fresh
            for op in self._pending:
                self._apply(op)
            self.data.changes = self.data.changes[-MAX_CHANGES:]
            write_atomic(self.path, dump_ledger(self.data))

    def _commit(self, ops: Iterable[_Op]) -> None:
        self._pending.extend(ops)
        self.save()

    def _log_run(self, run_id: str | None, rows: list[dict[str, Any]]) -> None:
        if not run_id or not self.runs_dir or not rows:
            return
        run_dir = self.runs_dir / run_id
        run_dir.mkdir(parents=True, exist_ok=True)
        text = "".join(json.dumps(r) + "\n" for r in rows)
        fd = os.open(run_dir / APPROVALS_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)

    def _apply(self, op: _Op) -> None:
        rec = self.data.kinds.setdefault(op.kind, KindRecord())
        if op.op == "demote":
            rec.rollbacks += 1
            self._reset(op, "demoted")
            return
        if op.op == "revoke":
            self._reset(op, "revoked")
            return
        rec.first_seen = rec.first_seen or op.at
        rec.last_seen = op.at
        if op.source == "auto":
            rec.auto_approvals += op.approved
            rec.auto_refusals += not op.approved
            return
        rec.approvals += op.approved
        rec.refusals += not op.approved
        rec.streak_approvals += op.approved
        rec.streak_refusals += not op.approved
        if not rec.promoted:
            ok, why = self._eligible(op.kind)
            if ok:
                rec.promoted, rec.promoted_at = True, op.at
                self._log(op, "promoted", why)
        elif (rec.streak_rate or 0.0) < self.config.promote_rate - 1e-9:
            rate = rec.streak_rate or 0.0
            self._reset(op, "demoted", f"approval rate fell to {rate:.0%}")

    def _reset(self, op: _Op, event: Literal["demoted", "revoked"], reason: str = "") -> None:
        rec = self.data.kinds[op.kind]
        rec.promoted, rec.demoted_at = False, op.at
        rec.streak_approvals = rec.streak_refusals = 0
        self._log(op, event, reason or op.reason)

    def _log(self, op: _Op, event: Literal["promoted", "demoted", "revoked"], reason: str) -> None:
        self.data.changes.append(Change(at=op.at, kind=op.kind, event=event, reason=reason,
                                        run_id=op.run_id))

