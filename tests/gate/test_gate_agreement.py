"""gate.agreement: a person's Python test run that exited 0 while the gate's own runner saw its tests fail."""

from __future__ import annotations

import pytest

from tether.gate.agreement import disagreements
from tether.gate.evidence import CheckRun, ProjectTest
from tether.gate.project import PYTHON


def _tests(**after: str | None) -> list[ProjectTest]:
    return [ProjectTest(id=tid.replace("__", "::").replace("_py", ".py"), suite=PYTHON, before="fail", after=a)
            for tid, a in after.items()]


def _check(command: str, code: int = 0) -> CheckRun:
    return CheckRun(command=command, source="person", kind="test", after_exit=code)


@pytest.mark.parametrize("command", ["python3 -m unittest -v test_calc", "python3 -m pytest -q test_calc.py",
                                     "pytest -q", "py.test test_calc.py::TestCalc", "cd . && python -m pytest",
                                     "python3 -m unittest test_calc.TestCalc.test_mul"])
def test_a_passing_test_run_whose_tests_failed_in_the_gates_runner_needs_review(command: str) -> None:
    project = _tests(test_calc_py__TestCalc__test_mul="fail", test_calc_py__TestCalc__test_add="pass")
    found = disagreements([_check(command)], project)
    assert found and "test_calc.py::TestCalc::test_mul (fail)" in found[0]


def test_a_test_that_vanished_after_is_disagreement() -> None:
    assert disagreements([_check("pytest test_calc.py")], _tests(test_calc_py__test_mul=None))


def test_agreement_and_other_selections_are_clear() -> None:
    project = _tests(test_calc_py__TestCalc__test_mul="pass", test_other_py__test_x="fail")
    assert disagreements([_check("python3 -m pytest -q test_calc.py")], project) == []
    assert disagreements([_check("python3 -m pytest -q test_calc.py::TestCalc::test_mul")], project) == []
    assert disagreements([_check("python3 -m pytest -k mul")], project) == []  # a selection the gate cannot read
    assert disagreements([_check("bash test.sh")], project) == []  # not a Python test run
    assert disagreements([_check("python3 -m pytest", code=1)], project) == []  # failed anyway: R08 says so
    assert disagreements([CheckRun(command="pytest", source="plan", kind="test", after_exit=0)], project) == []


def test_a_run_of_the_runs_own_test_file_is_not_compared_with_other_tests() -> None:
    project = _tests(test_calc_py__TestCalc__test_mul="fail")
    assert disagreements([_check("python3 -m pytest -q test_sub.py")], project) == []
    assert disagreements([_check("python3 -m unittest test_sub && echo done")], project) == []
    assert disagreements([_check("python3 -m pytest -q && echo done")], project)  # runs them all
