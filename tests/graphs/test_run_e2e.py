"""End to end: the scripted model drives the real graph on the real Docker sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.common.events import (
    ApprovalRecorded,
    CommandProposed,
    ExecFinished,
    ExecStarted,
    PlanRejected,
    StepChanged,
)
from tether.gate.registry import registered

SCENARIOS = Path(__file__).parent / "scenarios"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

pytestmark = pytest.mark.docker


def _failed(gate: dict) -> set[str]:
    return {rid for rid, r in gate.items() if r["status"] == "fail"}


def test_verified_success_example_passes_the_gate(tether):
    code, out, err = tether.run(EXAMPLES / "verified-success.yaml")
    assert code == 0, err
    assert out["status"] == "success"
    assert sorted(out["gate"]) == [r.id for r in registered()]
    assert not _failed(out["gate"])
    assert [s["status"] for s in out["steps"]] == ["done"] * 3
    assert (tether.workspace / "test_greet.sh").is_file()
    assert "completion gate" in err


def test_a_run_proven_only_by_its_own_test_ends_self_verified_unless_the_person_accepts_that(tether):
    tether.env["TETHER_RUN__ACCEPT_SELF_VERIFIED"] = "false"
    code, out, err = tether.run(EXAMPLES / "verified-success.yaml")
    assert (code, out["status"]) == (5, "self-verified"), err
    assert out["gate_passed"] and out["gate_proof"] == "run"
    assert "proof:" in err and "only checks the run wrote itself" in err


def test_unverified_claim_example_fails_r07_r08_r12_r13(tether):
    code, out, _ = tether.run(EXAMPLES / "unverified-claim.yaml")
    assert code == 1
    assert out["status"] == "failed"
    assert _failed(out["gate"]) == {"R07", "R08", "R12", "R13"}


def test_cascade_repair_example_blocks_dependents_then_repairs(tether):
    code, out, err = tether.run(EXAMPLES / "cascade-repair.yaml")
    assert code == 0, err
    steps = {s["id"]: s for s in out["steps"]}
    assert steps["generate"]["status"] == "skipped" and "replaced by" in steps["generate"]["reason"]
    assert all(steps[s]["status"] == "done" for s in ("generate-fixed", "test", "report"))
    changes = [(e.step, e.status) for e in tether.journal(out["run_id"]) if isinstance(e, StepChanged)]
    assert ("test", "blocked") in changes and ("report", "blocked") in changes  # transitive, by DFS
    assert changes.index(("report", "blocked")) < changes.index(("report", "pending"))


def test_cyclic_and_unknown_dependency_plans_are_sent_back(tether):
    code, out, err = tether.run(SCENARIOS / "plan-retry.yaml")
    assert code == 0, err
    rejected = [e.error for e in tether.journal(out["run_id"]) if isinstance(e, PlanRejected)]
    assert len(rejected) == 2
    assert "cycle" in rejected[0] and "unknown step(s): setup" in rejected[1]


def test_denied_never_reaches_the_sandbox_and_ask_is_refused_without_a_person(tether):
    code, out, _ = tether.run(SCENARIOS / "guarded.yaml")
    events = tether.journal(out["run_id"])
    ran = {e.cmd_id for e in events if isinstance(e, ExecStarted | ExecFinished)}
    proposed = {e.command: e.cmd_id for e in events if isinstance(e, CommandProposed)}
    assert proposed["touch denied.txt && rm -rf /"] not in ran
    assert proposed["touch asked.txt && pip install requests"] not in ran
    assert not (tether.workspace / "denied.txt").exists()
    assert not (tether.workspace / "asked.txt").exists()
    assert [(e.approved, e.by) for e in events if isinstance(e, ApprovalRecorded)] == [(False, "no-person")]
    assert code == 1
    assert {"R10", "R15"} <= _failed(out["gate"])
    assert out["gate"]["R11"]["status"] == "pass"


def test_yes_approves_asks_but_never_denies(tether):
    code, out, _ = tether.run(SCENARIOS / "guarded.yaml", "--yes")
    assert (tether.workspace / "asked.txt").exists()
    assert not (tether.workspace / "denied.txt").exists()
    events = tether.journal(out["run_id"])
    assert [(e.approved, e.by) for e in events if isinstance(e, ApprovalRecorded)] == [(True, "yes-flag")]
    assert out["gate"]["R11"]["status"] == "pass"


@pytest.mark.parametrize("verb", ["approve", "deny"])
def test_pause_on_ask_then_approve_or_deny_from_the_cli(tether, verb):
    code, out, _ = tether.run(SCENARIOS / "guarded.yaml", "--ask-later")
    assert code == 3
    assert out["status"] == "interrupted"
    assert out["awaiting"]["command"] == "touch asked.txt && pip install requests"
    assert not (tether.workspace / "asked.txt").exists()
    code, out, err = tether.cli(verb, out["run_id"])
    assert code == 1, err  # the scenario still fails the gate (R10, R15)
    assert out["status"] == "failed"
    assert (tether.workspace / "asked.txt").exists() == (verb == "approve")
    events = tether.journal(out["run_id"])
    assert [(e.approved, e.by) for e in events if isinstance(e, ApprovalRecorded)] == [(verb == "approve", "person")]
    code, _, err = tether.cli(verb, out["run_id"])
    assert code == 2 and "not waiting for an approval" in err


def test_bad_input_exits_2_with_the_fix(tether, tmp_path):
    code, _, err = tether.cli("run", "--model", "nonsense", "--workspace", str(tether.workspace))
    assert code == 2 and "PROVIDER:NAME" in err
    code, _, err = tether.run(SCENARIOS / "plan-retry.yaml", "--workspace", str(tmp_path / "missing"))
    assert code == 2 and "--workspace" in err
    script = tmp_path / "nogoal.yaml"
    script.write_text("responses: {}\n")
    code, _, err = tether.run(script)
    assert code == 2 and "no goal" in err
    assert not (tether.home / "runs").exists()
