"""`tether rollback`: put a run's workspace back, then demote what the run was trusted with.

Parts: `approved_kinds` (what a run approved), `RollbackResult` and
`rollback_run` (runtime.workspace.restore, then a demotion in the ledger of
every kind the run approved).
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, Field

from tether.common.snapshot import JOURNAL_FILE, RestoreResult
from tether.runtime.config import TetherConfig
from tether.runtime.run_ids import run_dir
from tether.runtime.trust.ledger import APPROVALS_FILE, LedgerCorruptError, TrustLedger
from tether.runtime.workspace.restore import restore


def _json_lines(file: Path) -> list[dict]:
    """JSON objects of a log, skipping lines that are not (a crash may cut the last one)."""
    rows = []
    lines = file.read_text(encoding="utf-8", errors="replace").splitlines() if file.is_file() else []
    for line in lines:
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def approved_kinds(path: Path) -> list[str]:
    """Kinds approved (by a person or automatically) in the run at `path`.

    Sources, all optional: `approvals.jsonl` rows `{"kind": K, "approved": true}`
    (written by `TrustLedger.record`); in `journal.jsonl`, events
    `{"type": "approval", "kinds": [...], "approved": true}`, events
    `{"kind": "approval", "cmd_id": C, "approved": true}` joined with the
    `{"kind": "verdict", "cmd_id": C, "kinds": [...]}` of the same command, and
    verdict events the trust ledger turned from ask into allow (`enforced`;
    not in shadow runs, which enforce nothing).
    """
    kinds = {r["kind"] for r in _json_lines(path / APPROVALS_FILE)
             if r.get("approved") is True and isinstance(r.get("kind"), str)}
    events = _json_lines(path / JOURNAL_FILE)
    verdicts = {e.get("cmd_id"): e.get("kinds") for e in events if e.get("kind") == "verdict"}
    shadow = any(e.get("kind") == "run_start" and e.get("shadow") is True for e in events)
    for e in events:
        found: object = None
        if e.get("type") == "approval" and e.get("approved") is True:
            found = e.get("kinds")
        elif e.get("kind") == "approval" and e.get("approved") is True:
            found = verdicts.get(e.get("cmd_id"))
        elif (not shadow and e.get("kind") == "verdict" and e.get("decision") == "ask"
              and e.get("enforced") == "allow"):
            found = e.get("kinds")
        if isinstance(found, list):
            kinds.update(k for k in found if isinstance(k, str))
    return sorted(kinds)


class RollbackResult(BaseModel):
    """A restored workspace and the kinds demoted because of it."""

    run_id: str
    restore: RestoreResult
    demoted: list[str] = Field(default_factory=list)
    ledger_error: str | None = None
    """Set when the ledger is corrupt: the workspace is restored but nothing was demoted."""


def rollback_run(config: TetherConfig, run_id: str) -> RollbackResult:
    """Restore the run's workspace, then demote every kind the run approved."""
    result = RollbackResult(run_id=run_id, restore=restore(run_dir(config.runs_dir, run_id), config.workspace))
    kinds = approved_kinds(run_dir(config.runs_dir, run_id))
    try:
        ledger = TrustLedger.load(config.ledger_path, config.trust, runs_dir=config.runs_dir)
        for kind in kinds:
            ledger.demote(kind, f"run {run_id} rolled back", run_id=run_id)
    except LedgerCorruptError as e:
        result.ledger_error = str(e)
        return result
    result.demoted = kinds
    return result
