"""Both sides of the gate's re-run at once, on the real engine: a timeout on the gate's side never shows a change."""

from __future__ import annotations

from concurrent.futures import Future

import pytest

from tether.gate.evidence import CheckRun
from tether.gate.project import Suite
from tether.gate.sides import Plan, rerun

pytestmark = pytest.mark.docker

SLOW_BEFORE = "test -f done || sleep 30"
"""Fast where the run's change is (`done` exists), slow on the pre-run copy: the gate's timeout stops it there."""


def _ready(box) -> Future:
    f: Future = Future()
    f.set_result(box)
    return f


def test_a_check_or_project_test_the_gate_stops_before_shows_nothing(make_sandbox, tmp_path):
    after, before = tmp_path / "after", tmp_path / "before"
    for folder in (after, before):
        folder.mkdir()
        (folder / "test_slow.sh").write_text(SLOW_BEFORE + "\n")
    (after / "done").write_text("yes\n")
    check = CheckRun(command=SLOW_BEFORE, source="person", kind="test")
    suite = Suite("script", "bash test_slow.sh", "test_slow.sh")
    plan = Plan(checks=[check], suites=[suite], workspace=after, timeout_s=1.5)
    out = rerun(plan, (_ready(make_sandbox(after)), after), (_ready(make_sandbox(before)), before))
    assert out.before_ran and check.passed_after
    assert check.before_exit is None and not check.fail_to_pass  # stopped by the gate, not failed by the code
    assert [(t.id, t.before, t.after, t.fail_to_pass) for t in out.project] == [("test_slow.sh", "error", "pass",
                                                                                 False)]


def test_a_check_the_gate_stops_after_does_not_pass(make_sandbox, tmp_path):
    after, before = tmp_path / "after", tmp_path / "before"
    after.mkdir()
    before.mkdir()
    check = CheckRun(command="sleep 30", source="person", kind="test")
    plan = Plan(checks=[check], suites=[], workspace=after, timeout_s=1.5)
    out = rerun(plan, (_ready(make_sandbox(after)), after), (_ready(make_sandbox(before)), before))
    assert out.before_ran and check.after_exit not in (0, None) and not check.passed_after
    assert check.before_exit is None
