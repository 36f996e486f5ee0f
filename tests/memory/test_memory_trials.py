"""Rule trials drawn per run, decay without use, scopes and forgetting one item (issue 13)."""

from __future__ import annotations

from datetime import timedelta

from memory_helpers import T0, learn_desc, record

from tether.memory.api import show_item
from tether.memory.config import MemoryConfig
from tether.memory.cycle import MemoryCycle
from tether.memory.forget import forget_lesson, forget_rule
from tether.memory.rule import Application, current_confidence, refresh
from tether.memory.rules import trial_draw

GOAL = "Render the config template with python"
ERR = "ModuleNotFoundError: No module named 'yaml'"


def failing(run_id: str, tool: str = "python", error: str = ERR):
    return record(run_id, GOAL, "failure", turns=[("render", f"{tool} render.py", 1, error)], failed=[(tool, error)])


def learn_rule(cycle: MemoryCycle, scripted, tool: str = "python", error: str = ERR, tag: str = "") -> str:
    model = scripted(compile=["c"] * 2, lessons=[{"lessons": []}] * 2, rule=[f"Install what {tool} needs first."])
    cycle.after_run(failing(f"learn{tag}-1", tool, error), model)
    report = cycle.after_run(failing(f"learn{tag}-2", tool, error), model)
    return report.rules_created[0]


def test_a_repeated_goal_tries_its_sub_threshold_rule(tmp_path, scripted, clock) -> None:
    cycle = MemoryCycle(tmp_path / "m", MemoryConfig(), clock=clock)  # the default trial rate, 0.2
    rule_a = learn_rule(cycle, scripted)
    rule_b = learn_rule(cycle, scripted, "node", "Error: Cannot find module 'yaml'", tag="b")
    tried, when = [], None
    for n in range(1, 15):  # the same goal every time; before, a goal+rule hash decided once and for all
        run_id = f"run-{n}"
        clock.advance(hours=1)
        recall = cycle.read(GOAL, run_id)
        assert recall.trial_draw == round(trial_draw(run_id), 6)  # recorded, and seeded by the run id
        trials = [r.id for r in recall.rules if r.trial]
        assert len(trials) == (1 if recall.trial_draw < 0.2 else 0)
        tried += trials
        when = clock() if trials else when
        cycle.after_run(
            record(run_id, GOAL, turns=[("look", "ls", 0, "")]),
            scripted(compile=["c"], lessons=[{"lessons": []}]),
            recall,
        )
    assert set(tried) == {rule_a, rule_b}  # the least recently tried goes next, so both get their turn
    assert cycle.store.load_rule(tried[-1]).last_tried == when  # shown by `tether memory list`


def test_confidence_decays_without_use_and_the_rule_retires(tmp_path, scripted, clock) -> None:
    cfg = MemoryConfig(rule_trial_rate=0.0, rule_half_life_days=10)
    cycle = MemoryCycle(tmp_path / "m", cfg, clock=clock)
    rule_id = learn_rule(cycle, scripted)
    rule = cycle.store.load_rule(rule_id)
    assert current_confidence(rule, cfg, clock()) == 0.40
    clock.advance(days=10)
    assert current_confidence(rule, cfg, clock()) == 0.20  # one half-life idle
    assert current_confidence(rule, cfg.model_copy(update={"rule_half_life_days": None}), clock()) == 0.40
    # A trial at 0.20 still happens; a day later the rule is below the retire line and never offered.
    always = MemoryCycle(tmp_path / "m", cfg.model_copy(update={"rule_trial_rate": 1.0}), clock=clock)
    assert [r.id for r in always.read(GOAL, "run-x").rules] == [rule_id]
    clock.advance(days=1)
    assert always.read(GOAL, "run-y").rules == []
    # The error recurring is a use: it refreshes the rule.
    report = cycle.after_run(failing("run-again"), scripted(compile=["c"], lessons=[{"lessons": []}]))
    assert report.rules_updated == [rule_id]
    assert current_confidence(cycle.store.load_rule(rule_id), cfg, clock()) == 0.40


def test_lessons_carry_their_project_and_recall_prefers_it(tmp_path, scripted, clock) -> None:
    cfg = MemoryConfig(rule_trial_rate=0.0, top_k=2, recall_global_share=0.5)
    cycle = MemoryCycle(tmp_path / "m", cfg, clock=clock)
    ids = {}
    for project, words in (("p-a", "alpha"), ("p-a", "beta"), ("p-b", "gamma"), ("p-b", "delta")):
        lesson = {"lessons": [{"title": words, "insight": f"Sort the numbers with care, step {words}."}]}
        run = record(f"run-{words}", f"Sort numbers {words}", turns=[(words, "sort -n f", 0, "")], project=project)
        [ids[words]] = cycle.after_run(run, scripted(compile=["c"], lessons=[lesson])).new_lessons
        assert cycle.store.load_lesson(ids[words]).project == project
    recall = cycle.read("Sort the numbers with care", "r1", "p-a")
    projects = sorted(x.project for x in recall.lessons)
    assert projects == ["p-a", "p-b"]  # one slot of two kept for the other project
    local_only = MemoryCycle(tmp_path / "m", cfg.model_copy(update={"recall_global_share": 0.0}), clock=clock)
    assert {x.project for x in local_only.read("Sort the numbers with care", "r2", "p-a").lessons} == {"p-a"}
    assert {x.project for x in local_only.read("Sort the numbers with care", "r3", "p-new").lessons} == {"p-a", "p-b"}


def test_forget_one_lesson_and_one_rule(cycle: MemoryCycle, scripted) -> None:
    lesson_id = learn_desc(cycle, scripted)
    rule_id = learn_rule(cycle, scripted)
    assert forget_lesson(cycle.store, lesson_id)["id"] == lesson_id
    assert cycle.read("Sort the numbers in x.txt in descending order").lesson_ids == []
    assert not cycle.store.lesson_path(lesson_id).exists() and lesson_id not in cycle.store.manifest_path.read_text()
    result = forget_rule(cycle.store, rule_id)
    assert sorted(result["runs_stripped"]) == ["learn-1", "learn-2"]
    assert cycle.store.rules() == []
    # One more occurrence does not bring it back from the stripped runs: it needs two fresh ones.
    report = cycle.after_run(failing("run-3"), scripted(compile=["c"], lessons=[{"lessons": []}]))
    assert report.rules_created == []


def test_a_rule_with_a_good_record_stays_in_prompts_while_idle(tmp_path, scripted, clock) -> None:
    cfg = MemoryConfig(rule_trial_rate=0.0)  # the default half-life (30 days) and threshold (0.60)
    cycle = MemoryCycle(tmp_path / "m", cfg, clock=clock)
    rule_id = learn_rule(cycle, scripted)
    store = cycle.store
    outcomes = ["success"] * 10 + ["failure"]  # 0.40 + 10 x 0.03 - 0.05 = 0.65
    with store.session():
        rule = store.load_rule(rule_id)
        applied = [Application(run=f"r{n}", outcome=o, at=clock()) for n, o in enumerate(outcomes)]
        store.save_rule(refresh(rule.model_copy(update={"applied": applied}), cfg, clock()))
    assert current_confidence(store.load_rule(rule_id), cfg, clock()) == 0.65
    for days, in_force in ((14, 0.6362), (60, 0.6125), (365, 0.6)):
        clock.now = T0 + timedelta(days=days)
        [recalled] = cycle.read(GOAL, f"run-{days}").rules
        assert (recalled.id, recalled.trial, recalled.confidence) == (rule_id, False, in_force)
        # MEMORY.md, `memory list` and `memory show` show the value in force, not the one saved
        assert f"(confidence {in_force:.2f})" in store.manifest_path.read_text()
        assert show_item(store, rule_id)["confidence_now"] == in_force
    assert store.load_rule(rule_id).confidence == 0.65  # the file keeps what it earned
    # Below the threshold the whole value fades: a new rule (0.40) retires after one half-life idle.
    assert current_confidence(store.load_rule(rule_id).model_copy(update={"applied": []}), cfg,
                              clock.now) < cfg.rule_retire_below
