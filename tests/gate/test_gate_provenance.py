"""gate.provenance and the project rows: a flipped project test is proof only when it is tied to the goal, and a
test that erred in the code under test with its file unchanged counts as failing before."""

from __future__ import annotations

from pathlib import Path

from tether.common.manifest import FileState
from tether.gate.evidence import Evidence, ProjectTest
from tether.gate.project import Suite, merge
from tether.gate.proof import proof
from tether.gate.provenance import file_of_test, tie

PY = "python3 tests"


def _state(text: str) -> FileState:
    import hashlib
    return FileState(sha256=hashlib.sha256(text.encode()).hexdigest(), size=len(text), mode=0o644)


def _ws(tmp_path: Path, files: dict[str, str]) -> dict[str, FileState]:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return {rel: _state(text) for rel, text in files.items()}


CALC_TESTS = """import unittest
from calc import add, mul


class T(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_mul(self):
        self.assertEqual(mul(3, 4), 12)
"""


def _row(tid: str, before: str, after: str = "pass", suite: str = PY) -> ProjectTest:
    return ProjectTest(id=tid, suite=suite, before=before, after=after)


def test_test_file_from_ids():
    files = {"tests/test_calc.py", "test_add.py", "pkg/__init__.py"}
    assert file_of_test("tests/test_calc.py::T::test_mul", "", files) == "tests/test_calc.py"
    assert file_of_test("tests.test_calc.T.test_mul", "", files) == "tests/test_calc.py"
    assert file_of_test("unittest.loader._FailedTest.test_add", "", files) == "test_add.py"
    assert file_of_test("bash test_greet.sh", "test_greet.sh", files) == "test_greet.sh"


def test_an_unrelated_flip_is_no_proof_and_a_related_one_is(tmp_path):
    start = _ws(tmp_path, {"test_calc.py": CALC_TESTS})
    rows = [_row("test_calc.T.test_add", "fail")]
    tie(rows, {PY: ""}, "Add a function mul(a, b) to calc.py", ["calc.py"], start, start, tmp_path)
    assert rows[0].fail_to_pass and not rows[0].related
    ev = Evidence(goal="Add a function mul(a, b) to calc.py", before_ran=True, project=rows)
    assert proof(ev)[0] == "none"
    rows = [_row("test_calc.T.test_mul", "fail")]
    tie(rows, {PY: ""}, "Add a function mul(a, b) to calc.py", ["calc.py"], start, start, tmp_path)
    assert rows[0].related and proof(Evidence(goal="g", before_ran=True, project=rows))[0] == "project"


def test_files_only_goal_ties_by_id_or_test_file_and_a_goal_naming_nothing_by_its_words(tmp_path):
    start = _ws(tmp_path, {"test_greet.sh": '[ "$(bash greet.sh bob)" = "hello, bob" ]\n',
                           "test_math.py": "from calc import add\n\ndef test_add():\n    assert add(1, 1) == 2\n"})
    shell = _row("bash test_greet.sh", "fail", suite="bash test_greet.sh")
    tie([shell], {"bash test_greet.sh": "test_greet.sh"}, "Create upper.sh that prints its argument in upper case",
        ["upper.sh"], start, start, tmp_path)
    assert not shell.related
    py = _row("test_math.py::test_add", "fail")
    tie([py], {PY: ""}, "Fix the bug in calc.py", ["calc.py"], start, start, tmp_path)
    assert py.related  # the test file imports calc
    unrelated = _row("test_math.py::test_add", "fail")
    tie([unrelated], {PY: ""}, "Make the greeting friendlier", [], start, start, tmp_path)
    assert not unrelated.related  # no word of the goal in the test's name (rt18c D10)
    named = _row("test_math.py::test_friendly_greeting", "fail")
    tie([named], {PY: ""}, "Make the greeting friendlier", [], start, start, tmp_path)
    assert named.related
    anything = _row("test_math.py::test_add", "fail")
    tie([anything], {PY: ""}, "Fix the failing tests", [], start, start, tmp_path)
    assert anything.related  # a goal with no word of its own takes any flip


def test_swe_bench_like_goal_is_tied_by_the_test_name(tmp_path):
    start = _ws(tmp_path, {"tests/test_dates.py": "def test_parse_date_empty():\n    assert parse('') is None\n"})
    row = _row("tests/test_dates.py::test_parse_date_empty", "fail")
    tie([row], {PY: ""}, "Fix the crash in parse_date when the input is empty", [], start, start, tmp_path)
    assert row.related and row.fail_to_pass


def test_an_error_before_counts_only_when_the_test_file_is_unchanged(tmp_path):
    start = _ws(tmp_path, {"test_calc.py": CALC_TESTS})
    same = _row("test_calc.T.test_mul", "error")
    tie([same], {PY: ""}, "Fix the crash in mul in calc.py", ["calc.py"], start, start, tmp_path)
    assert same.same_file and same.fail_to_pass
    end = _ws(tmp_path, {"test_calc.py": CALC_TESTS + "\n# edited\n"})
    changed = _row("test_calc.T.test_mul", "error")
    tie([changed], {PY: ""}, "Fix the crash in mul in calc.py", ["calc.py"], start, end, tmp_path)
    assert not changed.same_file and not changed.fail_to_pass
    missing = _row("test_gone.T.test_x", "error")
    tie([missing], {PY: ""}, "Fix calc.py", ["calc.py"], start, start, tmp_path)
    assert not missing.fail_to_pass
    script = _row("bash test_x.sh", "error", suite="bash test_x.sh")
    tie([script], {"bash test_x.sh": "test_x.sh"}, "Fix x", [], start, start, tmp_path)
    assert not script.fail_to_pass  # a runner that is not there says nothing


def test_a_module_that_did_not_import_before_gives_its_tests_after_as_error_rows():
    suite = Suite("python", PY)
    rows = merge([suite], {PY: {"unittest.loader._FailedTest.test_calc": "error"}},
                 {PY: {"test_calc.T.test_mul": "pass", "test_other.T.test_x": "pass"}})
    ids = {r.id: r for r in rows}
    assert ids["test_calc.T.test_mul"].before == "error" and ids["test_calc.T.test_mul"].module_error
    assert "test_other.T.test_x" not in ids
    rows = merge([suite], {PY: {"test_calc.py": "error"}}, {PY: {"test_calc.py::test_mul": "pass"}})
    assert [r.id for r in rows] == ["test_calc.py", "test_calc.py::test_mul"]


def test_a_tests_goal_is_proven_by_the_persons_check_running_the_new_tests():
    from tether.gate.evidence import CheckRun
    check = CheckRun(command="python3 -m unittest -v test_calc", source="person", authored=True, after_exit=0,
                     before_exit=0)
    ev = Evidence(goal="Write unit tests for add in test_calc.py", before_ran=True, checks=[check], tests_goal=True)
    assert proof(ev)[0] == "person"
    ev.tests_goal = False
    assert proof(ev)[0] == "none"
    ev.tests_goal, check.after_exit = True, 1
    assert proof(ev)[0] == "none"


def test_django_style_tests_py_is_discovered_and_collected(tmp_path):
    import json
    import subprocess
    import sys

    from tether.gate.project import HARNESS, discover
    (tmp_path / "tests.py").write_text("def test_add():\n    assert 1 + 1 == 2\n", encoding="utf-8")
    (tmp_path / "test_x.py").write_text("def test_one():\n    assert True\n", encoding="utf-8")
    assert [s.kind for s in discover({"tests.py": _state("x")}, None)] == ["python"]
    subprocess.run([sys.executable, "-c", HARNESS, str(tmp_path / "r.json")], cwd=tmp_path, capture_output=True,
                   timeout=120)
    assert json.loads((tmp_path / "r.json").read_text()) == {"test_x.py::test_one": ["PASSED", ""],
                                                             "tests.py::test_add": ["PASSED", ""]}


def test_npm_test_is_tied_through_the_test_files_its_script_runs(tmp_path):
    npm = "command -v npm >/dev/null || exit 127; npm test"
    start = _ws(tmp_path, {"package.json": '{"scripts": {"test": "node test.js"}}', "calc.js": "exports.mul = 1;\n",
                           "test.js": "const { mul } = require('./calc');\nassert.strictEqual(mul(2, 3), 6);\n"})
    rows = [ProjectTest(id="npm test", suite=npm, before="fail", after="pass")]
    tie(rows, {npm: ""}, "Fix mul(a, b) in calc.js so it returns the product.", ["calc.js"], start, start, tmp_path)
    assert rows[0].related
    rows = [ProjectTest(id="npm test", suite=npm, before="fail", after="pass")]
    tie(rows, {npm: ""}, "Fix parse_date in dates.js.", ["dates.js"], start, start, tmp_path)
    assert not rows[0].related
    end = {**start, "package.json": _state('{"scripts": {"test": "echo ok"}}')}  # the runner itself rewritten
    rows = [ProjectTest(id="npm test", suite=npm, before="fail", after="pass")]
    tie(rows, {npm: ""}, "Fix mul(a, b) in calc.js so it returns the product.", ["calc.js"], start, end, tmp_path)
    assert not rows[0].related
