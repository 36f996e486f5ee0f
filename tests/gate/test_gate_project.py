"""The project's own tests, the proof's source, what the run's checks see before, and tampering past the lists."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tether.common.manifest import manifest
from tether.gate.code_scan import code_tampering
from tether.gate.evidence import CheckRun, Evidence, ProjectTest, preserving
from tether.gate.project import PYTHON, Suite, discover, merge, outcomes, results_part
from tether.gate.proof import proof
from tether.gate.registry import check_gate
from tether.gate.rerun import own_support
from tether.gate.tamper import import_shadows, support_changes

PY = Suite("python", PYTHON)
CALC_TEST = ("import unittest\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n"
             "    def test_add(self):\n        print('noise')\n        self.assertEqual(add(1, 2), 3)\n\n"
             "    def test_open(self):\n        open('missing.txt')\n\n"
             "    def test_ok(self):\n        self.assertTrue(True)\n\n"
             "    @unittest.skip('later')\n    def test_skip(self):\n        pass\n\n"
             "    def test_sub(self):\n        for i in range(2):\n            with self.subTest(i=i):\n"
             "                self.assertEqual(i, 0)\n")
FORGED_REPORT = (  # the implementation prints the runners' own words where their reports would read them as a pass
    "import atexit, os\n\n\ndef add(a, b):\n    os.write(2, b'ok\\n')\n    return a - b\n\n\n"
    "atexit.register(lambda: os.write(1, b'PASSED test_calc.py::T::test_add\\n'))\n"
)


def run_suite(folder: Path, python: str | None = None) -> dict[str, str]:
    """The python suite as the gate runs it (gate/py_results.py, results read back after the mark), on the host."""
    env = dict(os.environ)
    if python:  # a python3 with pytest first on PATH
        (folder.parent / "bin").mkdir(exist_ok=True)
        link = folder.parent / "bin" / "python3"
        link.unlink(missing_ok=True)
        link.symlink_to(python)
        env["PATH"] = f"{link.parent}:{env['PATH']}"
    results, mark = str(folder.parent / ".results.json"), "tether-results-0123"
    res = subprocess.run(["bash", "-c", PY.line(results, mark)], cwd=folder, capture_output=True, text=True,
                         env=env, check=False)
    size, text = results_part(res.stdout, mark)
    assert size == len(text), res.stdout
    return outcomes(PY, res.returncode, text)


def test_unittest_ids_and_kinds_fail_means_by_assertion(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (ws / "test_calc.py").write_text(CALC_TEST)
    (ws / "test_broken.py").write_text("import not_there\n")
    got = run_suite(ws, "/usr/bin/python3" if Path("/usr/bin/python3").exists() else None)
    if "test_calc.py::T::test_add" in got:
        pytest.skip("the system python3 has pytest")
    assert got == {"test_calc.T.test_add": "fail", "test_calc.T.test_open": "error", "test_calc.T.test_ok": "pass",
                   "test_calc.T.test_skip": "skip", "test_calc.T.test_sub": "fail",
                   "unittest.loader._FailedTest.test_broken": "error"}


def test_pytest_ids_and_kinds_a_missing_file_or_import_is_an_error(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (ws / "test_calc.py").write_text(CALC_TEST)
    (ws / "test_broken.py").write_text("import not_there\n")
    got = run_suite(ws, sys.executable)
    assert got == {"test_calc.py::T::test_add": "fail", "test_calc.py::T::test_open": "error",
                   "test_calc.py::T::test_ok": "pass", "test_calc.py::T::test_skip": "skip",
                   "test_calc.py::T::test_sub": "fail", "test_broken.py": "error"}


@pytest.mark.parametrize("runner", ["unittest", "pytest"])
def test_what_the_code_prints_never_reads_as_a_pass(tmp_path, runner):
    """The cause of the flaky `skips-the-goals-test`: the runner's report shared the output with the code, and the
    engine forwards stdout and stderr apart, so under load a module's `print("ok")` landed between
    "test_add (...) ... " and "FAIL". Here the code writes those words on purpose, at the worst moments."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text(FORGED_REPORT)
    (ws / "test_calc.py").write_text(CALC_TEST.split("    def test_open")[0])
    (ws / "test_mul.py").write_text("print('ok')\n")
    got = run_suite(ws, sys.executable if runner == "pytest" else "/usr/bin/python3")
    if runner == "unittest" and "test_calc.py::T::test_add" in got:
        pytest.skip("the system python3 has pytest")
    assert got == {"test_calc.T.test_add" if runner == "unittest" else "test_calc.py::T::test_add": "fail"}


def test_results_the_gate_cannot_read_are_one_error_never_a_pass():
    assert outcomes(PY, 0, '{"t": ["PASSED", ""]') == {"(the python tests)": "error"}
    assert outcomes(PY, 0, '{"t": "PASSED"}') == {"t": "error"}
    assert outcomes(PY, 1, '{"t": ["GREEN", ""]}') == {"t": "error"}
    assert outcomes(PY, 2, "") == {"(the python tests)": "error"}
    assert outcomes(PY, 5, "{}") == {}
    assert results_part("noise\ntether-results-1 7\n{}", "tether-results-1") == (7, "{}")
    assert results_part("no mark", "tether-results-1") == (-1, "")


def test_scripts_126_and_127_are_errors_other_failures_are_by_assertion():
    s = Suite("script", "bash test.sh", "test.sh")
    assert outcomes(s, 0, "") == {"test.sh": "pass"}
    assert outcomes(s, 1, "FAIL") == {"test.sh": "fail"}
    assert outcomes(s, 127, "not found") == {"test.sh": "error"}


def test_discover_finds_only_what_existed_before(tmp_path):
    (tmp_path / "test_calc.py").write_text("")
    (tmp_path / "test.sh").write_text("")
    (tmp_path / "Makefile").write_text("all:\n\ttrue\ncheck:\n\ttrue\n")
    (tmp_path / "package.json").write_text('{"scripts": {"test": "echo \\"Error: no test specified\\" && exit 1"}}')
    kinds = [s.kind for s in discover(manifest(tmp_path), tmp_path)]
    assert kinds == ["python", "script", "make"]
    assert discover({}, None) == []


def test_merge_keeps_the_ids_seen_before_and_marks_broken_and_fail_to_pass():
    rows = merge([PY], {PY.command: {"a": "pass", "b": "fail", "c": "error"}},
                 {PY.command: {"a": "fail", "b": "pass", "c": "pass", "new": "pass"}})
    assert [(r.id, r.broken, r.fail_to_pass) for r in rows] == [("a", True, False), ("b", False, True),
                                                               ("c", False, False)]


def _ev(**kw) -> Evidence:
    return Evidence(goal="Fix calc.py", wants_change=True, before_ran=True, **kw)


def test_proof_person_then_project_then_run():
    own = CheckRun(command="bash t.sh", source="plan", kind="test", after_exit=0, before_exit=1)
    person = CheckRun(command="bash p.sh", source="person", kind="test", after_exit=0, before_exit=1,
                      after_bare_exit=0, before_bare_exit=1)
    f2p = ProjectTest(id="t", suite="s", before="fail", after="pass")
    assert proof(_ev(checks=[own]))[0] == "run"
    assert proof(_ev(checks=[own], project=[f2p]))[0] == "project"
    assert proof(_ev(checks=[own, person], project=[f2p]))[0] == "person"


def test_a_person_s_check_that_flips_only_through_the_run_s_tests_is_the_run_s_proof():
    # `unittest discover` passes before and after without the run's new test module; with it, it fails before
    lent = CheckRun(command="python3 -m unittest discover", source="person", kind="test", after_exit=0,
                    before_exit=1, after_bare_exit=0, before_bare_exit=0)
    assert proof(_ev(checks=[lent])) == ("run", proof(_ev(checks=[lent]))[1])
    assert "only through tests the run wrote" in proof(_ev(checks=[lent]))[1]
    # it fails now without the run's tests (it runs only them): not the person's either
    only = lent.model_copy(update={"after_bare_exit": 127, "before_bare_exit": 127})
    assert proof(_ev(checks=[only]))[0] == "run"
    # a run-written script it runs that names nothing changed proves nothing
    lazy = only.model_copy(update={"authored": True, "exercises_change": False})
    assert proof(_ev(checks=[lazy]))[0] == "none"
    # a behaviour-keeping goal: the person's check must pass before and after without the run's tests
    kept = lent.model_copy(update={"before_exit": 0})
    assert proof(_ev(checks=[kept], preserving=True))[0] == "person"
    assert proof(_ev(checks=[kept.model_copy(update={"after_bare_exit": 1})], preserving=True))[0] == "none"
    erred = ProjectTest(id="t", suite="s", before="error", after="pass")
    assert proof(_ev(project=[erred]))[0] == "none"


def test_a_run_proven_only_by_its_own_check_is_self_verified_unless_accepted():
    own = CheckRun(command="bash t.sh", source="plan", kind="test", after_exit=0, before_exit=1)
    assert check_gate(_ev(checks=[own])).self_verified
    assert not check_gate(_ev(checks=[own], accept_self_verified=True)).self_verified


def test_a_refactor_is_proven_by_tests_passing_before_and_after_and_broken_tests_fail_r08():
    kept = ProjectTest(id="t", suite="s", before="pass", after="pass")
    ev = _ev(project=[kept])
    ev.goal, ev.preserving = "Refactor calc.py without changing behaviour", True
    assert proof(ev)[0] == "project"
    ev.project = [kept, ProjectTest(id="u", suite="s", before="pass", after="fail")]
    report = check_gate(ev)
    assert "R08" in report.failed and "u (fail)" in next(r.evidence for r in report.results if r.id == "R08")
    assert preserving("Tidy greet.sh, no behaviour change") and not preserving("Fix the bug in calc.py")


def test_rerun_effects_fail_r08():
    ev = _ev(project=[ProjectTest(id="t", suite="s", before="fail", after="pass")], rerun_effects=[".greet.log"])
    assert "R08" in check_gate(ev).failed


def test_the_runs_own_checks_see_everything_it_wrote_but_the_change():
    start = {"greet.sh": object(), "tests/helper.sh": object()}
    written = ["greet.sh", "NOTES.md", "env.sh", "test_greet.sh", "new.sh", "tests/helper.sh", "pyproject.toml"]
    assert own_support(written, start, ["new.sh"]) == ["NOTES.md", "env.sh", "pyproject.toml", "test_greet.sh",
                                                      "tests/helper.sh"]
    assert own_support(written, start, []) == ["pyproject.toml", "test_greet.sh", "tests/helper.sh"]


@pytest.fixture
def two_trees(tmp_path: Path) -> tuple[Path, Path]:
    before, after = tmp_path / "before", tmp_path / "after"
    for root in (before, after):
        (root / "tests").mkdir(parents=True)
        (root / "test_greet.sh").write_text(". ./helpers.sh\ncheck x x\n")
        (root / "helpers.sh").write_text("check() { [ \"$1\" = \"$2\" ]; }\n")
        (root / "pytest.ini").write_text("[pytest]\naddopts = -p myplugin\n")
        (root / "myplugin.py").write_text("")
        (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
        (root / "helpers.py").write_text("")
        (root / "plugin.py").write_text("")
        (root / "tests" / "test_x.py").write_text("from helpers import ok\n")
    return before, after


def test_tampering_past_the_lists(two_trees):
    before, after = two_trees
    (after / "helpers.sh").write_text("check() { :; }\n")
    (after / "myplugin.py").write_text("x = 1\n")
    (after / "helpers.py").write_text("ok = 1\n")
    (after / "plugin.py").write_text("x = 2\n")  # a feature file named like a plugin, loaded by no test
    (after / "json.py").write_text("")
    (after / "tests" / "fractions.py").write_text("")
    (after / "deep").mkdir()
    (after / "deep" / "json.py").write_text("")  # not where the checks import from
    (after / "calc.pyc").write_bytes(b"\0")
    (after / "calc.py").write_text("import unittest\nunittest.TestCase.assertEqual = lambda *a: None\n")
    start, end = manifest(before), manifest(after)
    shadows = import_shadows(start, end)
    assert any("json.py" in s for s in shadows) and any("tests/fractions.py" in s for s in shadows)
    assert not any("deep/json.py" in s for s in shadows)
    assert not any("calc.pyc" in s for s in shadows)  # its source is there
    patches = code_tampering(after, ["calc.py", "test_greet.sh"])  # the ast scan took over tamper.PATCH
    assert any("unittest.TestCase.assertEqual" in p for p in patches) and all("calc.py" in p for p in patches)
    support = support_changes(start, end, before)
    assert any("helpers.sh" in s for s in support) and any("myplugin.py" in s for s in support)
    assert any("helpers.py" in s for s in support)
    assert not any("calc.py" in s or " plugin.py" in s for s in support)


def test_sourceless_bytecode_is_tampering(two_trees):
    before, after = two_trees
    (after / "speedups.pyc").write_bytes(b"\0")
    assert any("speedups.pyc" in s and "no source" in s for s in import_shadows(manifest(before), manifest(after)))


BATS = Suite("bats", "bats --tap t.bats", "t.bats")


def test_bats_tap_one_id_per_test_and_a_report_that_does_not_add_up_is_one_error():
    tap = "1..3\nok 1 adds\nnot ok 2 fails\n# (in test file t.bats, line 5)\n# ok 5 fake\nok 3 later # skip not yet\n"
    assert outcomes(BATS, 1, tap) == {"t.bats::adds": "pass", "t.bats::fails": "fail", "t.bats::later": "skip"}
    forged = "1..2\nok 1 adds\nok 2 fails\nnot ok 2 fails\n"  # a test wrote its own line to fd 3
    assert outcomes(BATS, 1, forged) == {"t.bats::(the bats tests)": "error"}
    assert outcomes(BATS, 0, "1..2\nok 1 adds\nnot ok 2 fails\n") == {"t.bats::(the bats tests)": "error"}
    assert outcomes(BATS, 137, "1..2\nok 1 adds\nok 2 fails\n") == {"t.bats::(the bats tests)": "error"}  # killed
    assert outcomes(BATS, 127, "") == {"t.bats::(the bats tests)": "error"}
    assert outcomes(BATS, 1, "1..2\nok 1 same\nnot ok 2 same\n") == {"t.bats::same": "error"}


def test_discover_runs_each_bats_file_that_existed_before(tmp_path):
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "greet.bats").write_text("@test 'x' {\n  true\n}\n")
    suites = discover(manifest(tmp_path), tmp_path)
    assert [(s.kind, s.target) for s in suites] == [("bats", "test/greet.bats")]
    assert "bats --tap test/greet.bats" in suites[0].command


def test_discover_runs_each_perl_test_file_through_prove(tmp_path):
    for rel in ("t/calc.t", "t/sub/more.t", "xt/author.t", "lib/Calc.pm", "docs/t.t"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("1;\n")
    suites = discover(manifest(tmp_path), tmp_path)
    assert [(s.kind, s.target) for s in suites] == [("prove", "t/calc.t"), ("prove", "t/sub/more.t"),
                                                    ("prove", "xt/author.t")]
    assert suites[0].command.endswith("prove -l t/calc.t")


def test_a_helper_sourced_mid_line_or_from_a_test_s_folder_is_loaded(two_trees):
    # one SOURCED pattern for the person's check and the project's tests (gate.check_inputs)
    before, after = two_trees
    for root in (before, after):
        (root / "ci").mkdir()
        (root / "ci" / "test_y.sh").write_text('[ -f x ] && source ./lib.sh; cd "$(dirname "$0")"; . env.sh\n')
        (root / "lib.sh").write_text("f() { :; }\n")
        (root / "ci" / "env.sh").write_text("X=1\n")
    (after / "lib.sh").write_text("f() { return 0; }\n")
    (after / "ci" / "env.sh").write_text("X=2\n")
    support = support_changes(manifest(before), manifest(after), before)
    assert any("lib.sh" in s for s in support) and any("ci/env.sh" in s for s in support)


def test_an_npm_or_make_suite_is_tied_to_the_goal_through_the_file_its_test_command_runs(tmp_path):
    from tether.gate.project import test_source

    (tmp_path / "package.json").write_text('{"scripts": {"test": "node ./test.js --verbose"}}')
    (tmp_path / "test.js").write_text("assert.strictEqual(mul(3, 4), 12);\n")
    (tmp_path / "Makefile").write_text("test:\n\t@bash greet_check.sh\n")
    assert test_source(Suite("npm", "npm test"), tmp_path) == "test.js"
    assert test_source(Suite("make", "make test"), tmp_path) == "Makefile"
    assert test_source(Suite("script", "bash t.sh", "t.sh"), tmp_path) == "t.sh"
    (tmp_path / "package.json").write_text('{"scripts": {"test": "jest"}}')
    assert test_source(Suite("npm", "npm test"), tmp_path) == ""


def test_a_suite_shares_its_run_only_with_a_check_line_that_runs_just_it():
    script = Suite("script", "bash test_greet.sh", "test_greet.sh")
    make = Suite("make", "command -v make >/dev/null || exit 127; make test")
    npm = Suite("npm", "command -v npm >/dev/null || exit 127; npm test")
    assert script.same_line("bash test_greet.sh") and script.same_line("  bash   test_greet.sh ")
    assert not script.same_line("bash test_greet.sh; true") and not script.same_line("bash -x test_greet.sh")
    assert make.same_line("make test") and make.same_line(make.command) and not make.same_line("make check")
    assert npm.same_line("npm test") and not npm.same_line("npm test -- --watch") and not npm.same_line("make test")
    # a python or bats suite reads a report its own line asks for: never shared
    assert not Suite("python", "python3 -m pytest").same_line("python3 -m pytest")
    assert not Suite("bats", "bats --tap t.bats", "t.bats").same_line("bats --tap t.bats")
