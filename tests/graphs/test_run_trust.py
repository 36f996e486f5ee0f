"""Trust in real runs: learned approvals, rollback, and shadow audit (issue 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.common.events import ApprovalRecorded, CommandProposed, ExecFinished
from tether.common.manifest import manifest

SCENARIOS = Path(__file__).parent / "scenarios"
NET_PIP = "network-access:pip:NET-010:install-workspace"
"""In a run's sandbox a named install's one question is the network it opens (guardian/sandbox_context.py); on the
person's machine it is also `package-install:pip:PKG-001:install-workspace`."""

pytestmark = pytest.mark.docker


def _approve_once(tether) -> str:
    (tether.workspace / "notes.txt").unlink(missing_ok=True)  # each run must change something (R06)
    code, out, _ = tether.run(SCENARIOS / "pip-ask.yaml", "--ask-later", "--no-memory")
    assert code == 3 and out["awaiting"]["command"] == "pip install requests || true"
    code, out, err = tether.cli("approve", out["run_id"])
    assert code == 0, err
    return out["run_id"]


def test_five_person_approvals_promote_then_rollback_demotes_and_restores(tether):
    (tether.workspace / "keep.txt").write_text("original\n")
    for _ in range(4):
        _approve_once(tether)
    _, trust, _ = tether.cli("trust", "show", NET_PIP)
    assert trust["approvals"] == 4 and not trust["promoted"]
    _approve_once(tether)
    _, trust, _ = tether.cli("trust", "show", NET_PIP)
    assert trust["promoted"]

    (tether.workspace / "notes.txt").unlink()
    before = manifest(tether.workspace)
    code, out, err = tether.run(SCENARIOS / "pip-ask.yaml", "--ask-later", "--no-memory")
    assert code == 0, err  # no pause: the promoted kind is auto-approved
    run_id = out["run_id"]
    approvals = [(e.approved, e.by) for e in tether.journal(run_id) if isinstance(e, ApprovalRecorded)]
    assert approvals == [(True, "trust")]
    assert (tether.workspace / "notes.txt").exists()

    code, result, err = tether.cli("rollback", run_id)
    assert code == 0, err
    # the journal records the ledger's kinds (rule and shape), not category:program: in the sandbox the install's
    # one question is the network it opens (its NET-010 kind, docs/network.md), the kind it was auto-approved on
    assert sorted(result["demoted"]) == [NET_PIP]
    assert manifest(tether.workspace) == before
    _, trust, _ = tether.cli("trust", "show", NET_PIP)
    assert not trust["promoted"]


def test_shadow_mode_runs_would_be_denials_in_the_sandbox_and_audits_them(tether):
    code, out, err = tether.run(SCENARIOS / "shadow.yaml", "--shadow", "--no-memory")
    run_id = out["run_id"]
    events = tether.journal(run_id)
    ids = {e.command: e.cmd_id for e in events if isinstance(e, CommandProposed)}
    results = {e.cmd_id: e for e in events if isinstance(e, ExecFinished)}
    denied = results[ids["echo shadow > /etc/tether-shadow-marker"]]
    assert denied.exit_code != 0 and "Read-only file system" in denied.output  # ran, inside the sandbox only
    assert not Path("/etc/tether-shadow-marker").exists()
    assert ids["pip install requests || true"] in results

    code, audit, err = tether.cli("audit", run_id)
    assert code == 0, err
    assert audit["denies"] == 1 and audit["asks"] == 1
    assert audit["kinds"][NET_PIP]["asks"] == 1
    assert any(k.startswith("system-config") for k in audit["kinds"])

    code, _, err = tether.run(SCENARIOS / "shadow.yaml", "--no-memory")
    assert code == 1  # enforced: the same scenario is refused without shadow mode


def test_yes_flag_approvals_do_not_teach_the_ledger(tether):
    """docs/trust.md: `--yes` is one blanket consent, not a person's judgement of each command."""
    for _ in range(5):
        (tether.workspace / "notes.txt").unlink(missing_ok=True)
        code, out, err = tether.run(SCENARIOS / "pip-ask.yaml", "--yes", "--no-memory")
        assert code == 0, err
        [approval] = [e for e in tether.journal(out["run_id"]) if isinstance(e, ApprovalRecorded)]
        assert (approval.by, approval.approved) == ("yes-flag", True)
    code, _, err = tether.cli("trust", "show", NET_PIP)
    assert code == 2 and "unknown action kind" in err  # five approvals, none on record
    code, out, err = tether.run(SCENARIOS / "pip-ask.yaml", "--no-memory")
    assert code != 0 and out["status"] != "success"  # not promoted: with nobody to ask, the ask is refused
