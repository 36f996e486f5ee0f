"""A run's record (runtime.hooks.base.RunRecord) built from its graph state and its journal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tether.common.events import ApprovalRecorded, CommandProposed, Event, ExecFinished, VerdictRecorded
from tether.runtime.hooks.base import RunRecord
from tether.runtime.run.totals import model_calls


def _commands(events: list[Event]) -> dict[str, dict[str, Any]]:
    cmds: dict[str, dict[str, Any]] = {}
    for e in events:
        if isinstance(e, CommandProposed):
            cmds[e.cmd_id] = {"id": e.cmd_id, "command": e.command, "decision": None, "exit_code": None}
        elif isinstance(e, VerdictRecorded) and e.cmd_id in cmds:
            cmds[e.cmd_id]["decision"] = e.decision
        elif isinstance(e, ExecFinished) and e.cmd_id in cmds:
            cmds[e.cmd_id]["exit_code"] = e.exit_code
    return cmds


def record_from(
    meta: dict[str, Any], values: dict[str, Any], events: list[Event], run_dir: Path, awaiting: dict[str, Any] | None
) -> RunRecord:
    """Build the record; a run whose graph has not finished is `interrupted`."""
    cmds = _commands(events)
    steps = [
        {
            "id": sid,
            "status": s["status"],
            "reason": s.get("reason", ""),
            "commands": [cmds[c] for c in s.get("commands", []) if c in cmds],
        }
        for sid, s in (values.get("steps") or {}).items()
    ]
    status = values.get("status") or "interrupted"
    reason = (
        values.get("stop_reason", "")
        if values.get("status")
        else (
            f"awaiting approval of `{awaiting['command']}`: tether approve|deny {meta['run_id']}"
            if awaiting
            else "not finished"
        )
    )
    return RunRecord(
        run_id=meta["run_id"], goal=meta["goal"], workspace=Path(meta["workspace"]), run_dir=run_dir,
        status=status, reason=reason, steps=steps, gate=values.get("gate"), summary=values.get("summary"),
        awaiting=awaiting, shadow=bool(meta.get("shadow")),
        cost={"model_calls": model_calls(values), "tokens": int(values.get("tokens") or 0)},
    )


def explain_refusals(record: RunRecord, events: list[Event]) -> RunRecord:
    """A run that did not succeed says which asks were refused because nobody was there, and how to answer them."""
    if record.status in ("success", "interrupted"):
        return record
    refused = {e.cmd_id for e in events if isinstance(e, ApprovalRecorded) and e.by == "no-person" and not e.approved}
    if not refused:
        return record
    commands = [e.command for e in events if isinstance(e, CommandProposed) and e.cmd_id in refused]
    shown = "; ".join(f"`{c[:80]}`" for c in commands[:3]) + (f" and {len(commands) - 3} more" if commands[3:] else "")
    why = (f"{len(commands)} command(s) the guardian asked about were refused because nobody was at a terminal to "
           f"answer ({shown}); rerun with --yes to approve such asks, or --ask-later to pause for "
           "`tether approve`/`tether deny`")
    return record.model_copy(update={"reason": f"{why}. {record.reason}" if record.reason else why})
