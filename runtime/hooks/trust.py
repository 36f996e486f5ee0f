"""Trust's side of a run: snapshot before it, learned auto-approval, shadow records.

Plugs the ledger (runtime.trust.ledger), the workspace snapshot (common.snapshot)
and the shadow recorder (runtime.trust.audit) into the runner's hooks.
"""

from __future__ import annotations

import logging
from typing import Literal

from tether.common.snapshot import snapshot
from tether.guardian.verdict import Verdict
from tether.runtime.config import TetherConfig
from tether.runtime.hooks.base import MemoryContext, NoHooks, RunInfo
from tether.runtime.trust.audit import ShadowRecorder
from tether.runtime.trust.kinds import verdict_kinds
from tether.runtime.trust.ledger import TrustLedger

log = logging.getLogger(__name__)


class TrustHooks(NoHooks):
    """Snapshot each workspace (for `tether rollback`) and apply the trust ledger to asks."""

    def __init__(self, config: TetherConfig) -> None:
        self.ledger = TrustLedger.load_or_closed(config.ledger_path, config.trust, runs_dir=config.runs_dir)
        self.recorder = ShadowRecorder(config.runs_dir)
        self.limits = config.workspace
        if self.ledger.closed_reason:
            log.warning("trust ledger closed, nothing is auto-approved: %s", self.ledger.closed_reason)

    def before_run(self, run: RunInfo) -> MemoryContext:
        snapshot(run.workspace, run.run_dir, self.limits)
        return MemoryContext()

    def decide_ask(self, verdict: Verdict, run_id: str) -> Literal["allow", "ask"]:
        if self.ledger.effective_decision(verdict) != "allow":
            return "ask"
        self.ledger.record(verdict, True, run_id, source="auto")
        return "allow"

    def record_approval(self, verdict: Verdict, approved: bool, run_id: str) -> None:
        self.ledger.record(verdict, approved, run_id, source="person")

    def trust_kinds(self, verdict: Verdict) -> list[str]:
        return verdict_kinds(verdict)

    def shadow_record(self, verdict: Verdict, command: str, person: bool | None, run_id: str) -> None:
        self.recorder.record(run_id, command, verdict, self.ledger.shadow_decision(verdict), person)
