"""Rule learner: signatures, the 7-day window, confidence arithmetic, injection."""

from __future__ import annotations

from memory_helpers import record

from tether.memory.config import MemoryConfig
from tether.memory.cycle import MemoryCycle
from tether.memory.rule import Application, error_signature, fold_confidence, normalize_error

ERR_A = "ModuleNotFoundError: No module named 'yaml' in /tmp/run-17/venv at 2026-03-01T10:00:00Z"
ERR_B = "ModuleNotFoundError: No module named 'yaml' in /work/other/venv at 2026-03-04T18:22:01Z"


def failing(run_id: str, error: str = ERR_A, outcome: str = "failure"):
    return record(run_id, "Render the config template with python", outcome,
                  turns=[("render", "python render.py", 1, error)], failed=[("python", error)])


def quiet_model(scripted, **extra):
    return scripted(compile=["c"] * 5, lessons=[{"lessons": []}] * 5, **extra)


def test_signature_ignores_paths_numbers_and_timestamps() -> None:
    assert normalize_error(ERR_A) == normalize_error(ERR_B)
    assert error_signature("python", ERR_A) == error_signature("python", ERR_B)
    assert error_signature("python", ERR_A) != error_signature("pip", ERR_A)
    uuid_err = "lock 3f2a9c1e-1111-2222-3333-444455556666 held by 0xdeadbeef"
    assert normalize_error(uuid_err) == "lock <uuid> held by <hex>"


def test_same_error_twice_within_seven_days_makes_a_rule(cycle: MemoryCycle, scripted, clock) -> None:
    model = quiet_model(scripted, rule=["Install PyYAML in the venv before running python scripts that import yaml."])
    cycle.after_run(failing("run-1"), model)
    clock.advance(days=6)
    report = cycle.after_run(failing("run-2", ERR_B), model)
    assert len(report.rules_created) == 1
    rule = cycle.store.load_rule(report.rules_created[0])
    assert rule.confidence == 0.40 and rule.source_runs == ["run-1", "run-2"] and rule.tool == "python"
    assert rule.signature == error_signature("python", ERR_A)
    assert rule.id in cycle.store.manifest_path.read_text()
    assert [c["site"] for c in model.calls].count("rule") == 1
    # Below 0.60 it is not injected.
    assert cycle.read("Render the config template with python").rules == []


def test_same_error_eight_days_apart_makes_no_rule(cycle: MemoryCycle, scripted, clock) -> None:
    model = quiet_model(scripted)  # no `rule` answers: a call would fail the test
    cycle.after_run(failing("run-1"), model)
    clock.advance(days=8)
    report = cycle.after_run(failing("run-2", ERR_B), model)
    assert report.rules_created == [] and cycle.store.rules() == []


def test_confidence_math_and_the_asymmetry() -> None:
    cfg = MemoryConfig()
    wins = [Application(run=f"s{i}", outcome="success") for i in range(7)]
    assert fold_confidence(wins[:6], cfg) < 0.60 <= fold_confidence(wins, cfg)  # 7 successes to be injected
    losses = [Application(run=f"f{i}", outcome="failure") for i in range(5)]
    assert fold_confidence(losses[:4], cfg) >= cfg.rule_retire_below > fold_confidence(losses, cfg)  # 5 to retire


def test_injected_rule_gains_on_success_and_retires_after_failures(tmp_path, scripted, clock) -> None:
    cfg = MemoryConfig(rule_trial_rate=1.0, rule_initial_confidence=0.58)
    cycle = MemoryCycle(tmp_path / "m", cfg, clock=clock)
    model = quiet_model(scripted, rule=["Install PyYAML first."])
    cycle.after_run(failing("run-1"), model)
    cycle.after_run(failing("run-2"), model)
    [rule] = cycle.store.rules()
    recall = cycle.read("Render the config template with python")
    assert [(r.id, r.trial) for r in recall.rules] == [(rule.id, True)]  # below 0.60: only on trial
    ok = record("run-3", recall.goal, turns=[("render", "python render.py", 0, "done")])
    report = cycle.after_run(ok, quiet_model(scripted), recall)
    assert any(s.step == "credit" and "success" in s.detail for s in report.steps)
    assert cycle.store.load_rule(rule.id).confidence == 0.61
    recall = cycle.read("Render the config template with python")
    assert [(r.id, r.trial) for r in recall.rules] == [(rule.id, False)]  # injected for real now
    assert "Install PyYAML first." in recall.prompt()
    for n in range(4, 13):
        cycle.after_run(failing(f"run-{n}"), quiet_model(scripted), cycle.read(recall.goal))
    retired = cycle.store.load_rule(rule.id)
    assert retired.status == "retired" and retired.confidence < cfg.rule_retire_below
    assert rule.id not in cycle.store.manifest_path.read_text()
    assert cycle.read(recall.goal).rules == []


def test_rule_not_credited_when_its_tool_was_not_used(tmp_path, scripted, clock) -> None:
    cycle = MemoryCycle(tmp_path / "m", MemoryConfig(rule_trial_rate=1.0), clock=clock)
    model = quiet_model(scripted, rule=["Install PyYAML first."])
    cycle.after_run(failing("run-1"), model)
    cycle.after_run(failing("run-2"), model)
    recall = cycle.read("Render the config template with python")
    other = record("run-3", recall.goal, turns=[("look", "ls", 0, "a b")])
    cycle.after_run(other, quiet_model(scripted), recall)
    assert cycle.store.rules()[0].applied == []
