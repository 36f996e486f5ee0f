"""Provenance: forgetting a run leaves nothing under the memory root that cites it."""

from __future__ import annotations

import subprocess

import pytest
from memory_helpers import learn_desc, record

from tether.memory.cycle import MemoryCycle
from tether.memory.errors import UnknownMemoryItemError
from tether.memory.forget import forget_run

ERR = "ModuleNotFoundError: No module named 'yaml'"
NARROW = {"verdict": "too_general", "evidence": ["sort -rn data.txt > out.txt"],
          "lesson": "Put the largest numbers first only for descending order.",
          "applicability": "numeric sorting tasks in descending order"}


def grep(root, needle: str) -> str:
    return subprocess.run(["grep", "-rl", needle, str(root)], capture_output=True, text=True).stdout


def test_forget_run_removes_everything_derived_from_it(cycle: MemoryCycle, scripted, clock) -> None:
    lesson_id = learn_desc(cycle, scripted)  # taught by run-desc
    model = scripted(
        compile=["c"] * 3,
        revise=[NARROW],
        rule=["Install PyYAML first."],
        lessons=[
            {"lessons": [{"title": "t", "insight": "Read the task's required order before sorting."}]},
            {"lessons": []},
            {"lessons": []},
        ],
    )
    asc = record(
        "zz-asc-run",
        "Sort the numbers in values.txt in ascending order",
        "failure",
        turns=[
            (f"Per {lesson_id}; also see /memory/runs/run-desc/", "cat /memory/runs/run-desc/trajectory.md", 0, "x"),
            ("sort", "sort -rn values.txt", 0, ""),
        ],
        failed=[("python", ERR)],
    )
    report = cycle.after_run(asc, model, cycle.read(asc.goal))
    assert report.new_lessons and cycle.store.load_lesson(lesson_id).revision_count == 1
    clock.advance(days=1)
    cycle.after_run(record("run-py-1", "Render template", "failure", failed=[("python", ERR)]), model)
    clock.advance(days=1)
    cycle.after_run(record("run-py-2", "Render template", "failure", failed=[("python", ERR)]), model)
    [rule] = cycle.store.rules()
    assert rule.source_runs == ["zz-asc-run", "run-py-1", "run-py-2"]

    result = forget_run(cycle.store, "zz-asc-run", clock())
    assert result.lessons_deleted == report.new_lessons and result.lessons_changed == [lesson_id]
    assert grep(cycle.store.root, "zz-asc-run") == ""
    lesson = cycle.store.load_lesson(lesson_id)
    assert lesson.insight == "Put the largest numbers first when sorting numbers." and lesson.revision_count == 0
    assert cycle.store.load_rule(rule.id).source_runs == ["run-py-1", "run-py-2"]
    assert "zz-asc" not in cycle.read("Sort the numbers in ascending order").model_dump_json()

    forget_run(cycle.store, "run-desc", clock())
    assert grep(cycle.store.root, "run-desc") == ""
    assert lesson_id not in cycle.store.manifest_path.read_text()
    assert cycle.read("Sort the numbers in descending order").lessons == []


def test_forget_unknown_run_raises(cycle: MemoryCycle, clock) -> None:
    with pytest.raises(UnknownMemoryItemError, match="no run 'nope'"):
        forget_run(cycle.store, "nope", clock())


def test_rule_whose_only_sources_are_forgotten_is_deleted(cycle: MemoryCycle, scripted, clock) -> None:
    model = scripted(compile=["c"] * 2, lessons=[{"lessons": []}] * 2, rule=["Install PyYAML first."])
    cycle.after_run(record("run-a", "Render", "failure", failed=[("python", ERR)]), model)
    cycle.after_run(record("run-b", "Render", "failure", failed=[("python", ERR)]), model)
    [rule] = cycle.store.rules()
    forget_run(cycle.store, "run-a", clock())
    assert cycle.store.load_rule(rule.id).source_runs == ["run-b"]
    report = forget_run(cycle.store, "run-b", clock())
    assert report.rules_deleted == [rule.id] and cycle.store.rules() == []
    assert rule.id not in cycle.store.manifest_path.read_text()
