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


class Spy:
    """A real sandbox whose exec lines are noted (what the gate asked of it, in order)."""

    def __init__(self, box) -> None:
        self.box, self.lines, self.workspace, self.notices = box, [], box.workspace, box.notices
        self.stream_scanner = None

    def exec(self, command, **kwargs):
        self.lines.append(command)
        return self.box.exec(command, **kwargs)

    def processes(self):
        self.lines.append("(processes)")
        return self.box.processes()

    def close(self) -> None:
        self.box.close()

    def runs(self, part: str) -> int:
        return sum(part in line for line in self.lines)


def _sides(make_sandbox, tmp_path, test_sh: str, greet_after: str):
    after, before = tmp_path / "after", tmp_path / "before"
    for folder, greet in ((after, greet_after), (before, "echo hi\n")):
        folder.mkdir()
        (folder / "test_greet.sh").write_text(test_sh)
        (folder / "greet.sh").write_text(greet)
    return after, before, Spy(make_sandbox(after)), Spy(make_sandbox(before))


GREET_TEST = 'out=$(bash greet.sh tether)\n[ "$out" = "hello, tether" ] || { echo "FAIL: $out"; exit 1; }\n'
GOOD = 'echo "hello, ${1:-world}"\n'


def test_a_suite_the_persons_check_runs_as_it_stands_runs_once_per_side(make_sandbox, tmp_path):
    after, before, a, b = _sides(make_sandbox, tmp_path, GREET_TEST, GOOD)
    check = CheckRun(command="bash test_greet.sh", source="person", kind="test")
    suite = Suite("script", "bash test_greet.sh", "test_greet.sh")
    plan = Plan(checks=[check], suites=[suite], workspace=after, timeout_s=20)
    out = rerun(plan, (_ready(a), after), (_ready(b), before))
    assert (check.after_exit, check.after_bare_exit, check.before_exit) == (0, 0, 1)
    assert [(t.id, t.before, t.after, t.fail_to_pass) for t in out.project] == [("test_greet.sh", "fail", "pass",
                                                                                 True)]
    # one run of the line on each side gives both the check's and the suite's outcome
    assert a.runs("bash test_greet.sh") == 1 and b.runs("bash test_greet.sh") == 1
    # the after side: its baseline, the line, /tmp listed once (nothing ran before the line), its processes
    assert a.lines[0] == "(processes)" and a.lines[-1] == "(processes)" and len(a.lines) == 4
    assert a.runs("find /tmp") == 1
    assert out.effects == [] and out.left == []


def test_a_shared_suites_leftovers_in_tmp_are_the_suites_not_the_persons_scratch(make_sandbox, tmp_path):
    leaves = GREET_TEST + "echo x > /tmp/suite-left.txt\n"
    after, before, a, b = _sides(make_sandbox, tmp_path, leaves, GOOD)
    check = CheckRun(command="bash test_greet.sh", source="person", kind="test")
    scratch = CheckRun(command="echo y > /tmp/person-scratch.txt", source="person", kind="run")
    suite = Suite("script", "bash test_greet.sh", "test_greet.sh")
    plan = Plan(checks=[check, scratch], suites=[suite], workspace=after, timeout_s=20)
    out = rerun(plan, (_ready(a), after), (_ready(b), before))
    assert check.passed_after and a.runs("bash test_greet.sh") == 1
    # what the suite's line left is judged (as when the suite ran on its own); the person's own scratch is theirs
    assert out.effects == ["/tmp/suite-left.txt"]


def test_a_suite_the_persons_check_does_not_run_as_it_stands_runs_on_its_own(make_sandbox, tmp_path):
    after, before, a, b = _sides(make_sandbox, tmp_path, GREET_TEST, GOOD)
    check = CheckRun(command="bash test_greet.sh && echo done", source="person", kind="test")
    suite = Suite("script", "bash test_greet.sh", "test_greet.sh")
    plan = Plan(checks=[check], suites=[suite], workspace=after, timeout_s=20)
    out = rerun(plan, (_ready(a), after), (_ready(b), before))
    assert check.passed_after and [t.fail_to_pass for t in out.project] == [True]
    assert a.runs("bash test_greet.sh") == 2 and b.runs("bash test_greet.sh") == 2
    assert a.runs("find /tmp") == 2  # after the suite (its leftovers), after the person's check


def test_a_shared_suite_the_gate_stops_before_shows_nothing(make_sandbox, tmp_path):
    after, before, a, b = _sides(make_sandbox, tmp_path, "test -f done || sleep 30\n", GOOD)
    (after / "done").write_text("yes\n")
    check = CheckRun(command="bash test_greet.sh", source="person", kind="test")
    suite = Suite("script", "bash test_greet.sh", "test_greet.sh")
    plan = Plan(checks=[check], suites=[suite], workspace=after, timeout_s=1.5)
    out = rerun(plan, (_ready(a), after), (_ready(b), before))
    assert check.passed_after and check.before_exit is None
    assert [(t.before, t.after, t.fail_to_pass) for t in out.project] == [("error", "pass", False)]
