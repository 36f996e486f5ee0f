"""CLI of trust escalation: `tether trust list|show|revoke`, `tether snapshot gc`, `tether audit`.

`tether rollback` and `tether apply` are in runtime.cli.undo.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from tether.common.snapshot import gc_snapshots
from tether.runtime.cli.common import (
    HomeOption,
    JsonOption,
    config,
    errors_exit,
    fail,
    out,
    print_json,
    resolve_run,
)
from tether.runtime.config import TetherConfig
from tether.runtime.terminal import safe
from tether.runtime.trust.audit import AuditReport, audit_run
from tether.runtime.trust.ledger import TrustLedger, never_promoted

trust_app = typer.Typer(help="Inspect and edit the trust ledger (what is auto-approved).",
                        no_args_is_help=True)
KindArg = Annotated[str, typer.Argument(
    help="Action kind, `category:program:RULE:shape`, e.g. package-install:pip:PKG-001:install-workspace.")]


def _ledger(cfg: TetherConfig) -> TrustLedger:
    with errors_exit():
        return TrustLedger.load(cfg.ledger_path, cfg.trust, runs_dir=cfg.runs_dir)


def _pct(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.0%}"


def _taught(cfg: TetherConfig) -> dict[str, dict[str, list[int]]]:
    from tether.runtime.agents.learn import taught

    return taught(cfg.home)


def _taught_text(by: dict[str, list[int]]) -> str:
    return ", ".join(f"{agent} {yes}/{yes + no}" for agent, (yes, no) in sorted(by.items())) or "-"


def _kind_json(ledger: TrustLedger, kind: str, taught: dict[str, dict[str, list[int]]] | None = None) -> dict[str, Any]:
    rec = ledger.data.kinds[kind]
    by = (taught or {}).get(kind, {})
    return rec.model_dump(mode="json") | {
        "rate": rec.rate, "streak_rate": rec.streak_rate,
        "never_promoted": never_promoted(kind), "auto_approved": ledger.is_promoted(kind),
        "taught_by": {agent: {"approvals": yes, "refusals": no} for agent, (yes, no) in sorted(by.items())}}


@trust_app.command("list")
def list_kinds(home: HomeOption = None, json: JsonOption = False) -> None:
    """Every action kind on record: approvals, refusals, rate, rollbacks, promotion, which agents taught it."""
    cfg = config(home)
    ledger = _ledger(cfg)
    taught = _taught(cfg)
    kinds = sorted(ledger.data.kinds)
    if json:
        print_json({"ledger": str(ledger.path), "kinds": {k: _kind_json(ledger, k, taught) for k in kinds}})
        return
    table = Table("kind", "approved", "refused", "rate", "rollbacks", "auto", "last seen", "taught by (agent yes/all)")
    table.columns[0].no_wrap = True
    for kind in kinds:
        rec = ledger.data.kinds[kind]
        status = "never" if never_promoted(kind) else "yes" if ledger.is_promoted(kind) else "no"
        table.add_row(safe(kind), str(rec.approvals), str(rec.refusals), _pct(rec.rate), str(rec.rollbacks),
                      status, rec.last_seen.strftime("%m-%d %H:%M") if rec.last_seen else "-",
                      safe(_taught_text(taught.get(kind, {}))))
    out.print(table if kinds else f"no kinds on record yet in {safe(ledger.path)}")


@trust_app.command("show")
def show(kind: KindArg, home: HomeOption = None, json: JsonOption = False) -> None:
    """One kind's counters and its change log."""
    cfg = config(home)
    ledger = _ledger(cfg)
    if kind not in ledger.data.kinds:
        fail(f"unknown action kind {kind!r}; see `tether trust list` for the kinds on record")
    data = _kind_json(ledger, kind, _taught(cfg))
    changes = [c.model_dump(mode="json", exclude_none=True) for c in ledger.data.changes if c.kind == kind]
    if json:
        print_json({"kind": kind, **data, "changes": changes})
        return
    out.print(f"[bold]{safe(kind)}[/]")
    for key, value in data.items():
        out.print(safe(f"  {key}: {_pct(value) if key.endswith('rate') else value}"))
    for c in changes:
        out.print(safe(f"  {c['at']} {c['event']} {c.get('reason', '')} {c.get('run_id', '')}".rstrip()))


@trust_app.command("revoke")
def revoke(kind: KindArg, home: HomeOption = None, json: JsonOption = False) -> None:
    """Withdraw a kind's auto-approval; it needs fresh approvals to be promoted again."""
    ledger = _ledger(config(home))
    with errors_exit():
        ledger.revoke(kind)
    if json:
        print_json({"kind": kind, "revoked": True})
    else:
        out.print(f"revoked {safe(kind)}: it asks again until re-earned")


snapshot_app = typer.Typer(help="Workspace snapshots taken before each run (what `tether rollback` restores).",
                           no_args_is_help=True)


@snapshot_app.command("gc")
def snapshot_gc(
    keep: Annotated[
        int | None, typer.Option("--keep", min=0, help="Snapshots to keep (default: workspace.snapshot_keep).")
    ] = None,
    home: HomeOption = None,
    json: JsonOption = False,
) -> None:
    """Remove all but the newest snapshots; their runs stay listed but can no longer be rolled back."""
    cfg = config(home)
    n = cfg.workspace.snapshot_keep if keep is None else keep
    with errors_exit():
        pruned = [] if keep is None and n == 0 else gc_snapshots(cfg.runs_dir, n)  # snapshot_keep 0: keep all
    if json:
        print_json({"kept": n, "pruned": pruned})
    else:
        out.print(f"removed {len(pruned)} snapshot(s), kept the newest {n}")


def audit(run_id: Annotated[str | None, typer.Argument(
              help="Run id (whole, a unique prefix, or `last`); leave out with --agents.")] = None,
          agents: Annotated[bool, typer.Option(
              "--agents", help="Shadow audit of other agents' hooks (tether hook install --shadow).")] = False,
          home: HomeOption = None, json: JsonOption = False) -> None:
    """Shadow report of a run (or, with --agents, of other agents): would-be denies, asks, agreement per kind."""
    cfg = config(home)
    if agents:
        _agents_audit(cfg, json)
        return
    if run_id is None:
        fail("give a run id (or `last`), or --agents for the shadow audit of other agents' hooks")
    run_id = resolve_run(cfg, run_id)
    with errors_exit():
        report = audit_run(cfg.runs_dir, run_id)
    if json:
        print_json(report.as_json())
        return
    _print_report(report)


def _agents_audit(cfg: TetherConfig, json: bool) -> None:
    from tether.runtime.agents.audit import audit_agents

    found = audit_agents(cfg.home)
    if json:
        print_json({"agents": {a: {k: row.as_json() for k, row in sorted(kinds.items())}
                               for a, kinds in sorted(found.items())}})
        return
    if not found:
        out.print("no shadow records yet; install a hook with `tether hook install AGENT --shadow`")
        return
    table = Table("agent", "kind", "calls", "allow", "ask", "deny", "auto", "ran", "refused", "agreement",
                  "asks run")
    for agent, kinds in sorted(found.items()):
        for kind, r in sorted(kinds.items()):
            table.add_row(safe(agent), safe(kind), str(r.calls), str(r.would_allow), str(r.would_ask),
                          str(r.would_deny), str(r.would_auto), str(r.ran), str(r.refused), _pct(r.agreement),
                          f"{r.asks_ran}/{r.would_ask}")
    out.print(table)


def _print_report(report: AuditReport) -> None:
    out.print(f"run {safe(report.run_id)}: {report.commands} commands, {report.allows} allowed, "
              f"{report.denies} would be denied, {report.asks} would ask, "
              f"{report.auto_approvals} would be auto-approved; agreement {_pct(report.agreement)} "
              f"over {report.compared} answered asks")
    table = Table("kind", "deny", "ask", "auto", "approved", "refused", "agreement", "auto agreement")
    table.columns[0].no_wrap = True
    for kind, k in sorted(report.kinds.items()):
        table.add_row(safe(kind), str(k.denies), str(k.asks), str(k.auto_approvals), str(k.person_approved),
                      str(k.person_refused), _pct(k.agreement), _pct(k.auto_agreement))
    if report.kinds:
        out.print(table)


def register(app: typer.Typer) -> None:
    """Add `trust`, `snapshot` and `audit` to the main app."""
    app.add_typer(trust_app, name="trust")
    app.add_typer(snapshot_app, name="snapshot")
    app.command("audit")(audit)
