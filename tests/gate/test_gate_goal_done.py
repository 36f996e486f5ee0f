"""Does the diff do what the goal names? The refactor check, tests that cannot fail, named functions, deletions,
and project tests tied to a goal that names nothing (rt18c families A, B, H, I)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tether.common.manifest import FileState
from tether.gate.evidence import ProjectTest, files_to_delete, goal_flags
from tether.gate.hollow_tests import hollow
from tether.gate.named_code import missing_names
from tether.gate.provenance import tie
from tether.gate.refactor import refactor_gaps
from tether.gate.scan import _only_adds_tests


def _tree(root: Path, files: dict[str, str]) -> dict[str, FileState]:
    out = {}
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        data = text.encode()
        out[rel] = FileState(sha256=hashlib.sha256(data).hexdigest(), size=len(data), mode=0o644)
    return out


def _sides(tmp_path: Path, before: dict[str, str], after: dict[str, str]):
    start = _tree(tmp_path / "snap", before)
    end = _tree(tmp_path / "ws", after)
    return start, end, tmp_path / "ws", tmp_path / "snap"


GREET = 'import sys\n\ndef greet(n):\n    return "hello, " + n\n\nprint(greet(sys.argv[1]))\n'


@pytest.mark.parametrize("goal", ["Rename the function greet to welcome in greet.py.", "Add type hints to greet.py.",
                                  "Simplify greet.py without changing its behaviour.", "Move greet.py into src/."])
def test_a_comment_only_diff_is_no_refactor(tmp_path, goal):
    start, end, ws, snap = _sides(tmp_path, {"greet.py": GREET}, {"greet.py": GREET + "# renamed\n\n"})
    gaps = refactor_gaps(goal, start, end, ws, snap)
    assert gaps and "only comments" in gaps[0]


def test_a_goal_about_comments_may_change_only_comments(tmp_path):
    start, end, ws, snap = _sides(tmp_path, {"greet.py": GREET}, {"greet.py": "# greets\n" + GREET})
    assert refactor_gaps("Add comments to greet.py.", start, end, ws, snap) == []


def test_the_rename_target_must_be_in_the_changed_files(tmp_path):
    goal = "Rename the function greet to welcome in greet.py."
    start, end, ws, snap = _sides(tmp_path, {"greet.py": GREET}, {"greet.py": GREET.replace("n)", "name)")})
    assert "welcome" in refactor_gaps(goal, start, end, ws, snap)[0]
    start, end, ws, snap = _sides(tmp_path / "b", {"greet.py": GREET}, {"greet.py": GREET.replace("greet", "welcome")})
    assert refactor_gaps(goal, start, end, ws, snap) == []


def test_an_extracted_function_must_appear(tmp_path):
    goal = "Extract the greeting in greet.py into a function greet(name)."
    before = 'import sys\nprint("hello, " + sys.argv[1])\n'
    start, end, ws, snap = _sides(tmp_path, {"greet.py": before}, {"greet.py": before.replace("+", " + ")})
    assert refactor_gaps(goal, start, end, ws, snap)  # a reformatting is no extraction
    after = 'import sys\ndef greet(name):\n    return "hello, " + name\nprint(greet(sys.argv[1]))\n'
    start, end, ws, snap = _sides(tmp_path / "b", {"greet.py": before}, {"greet.py": after})
    assert refactor_gaps(goal, start, end, ws, snap) == []


def test_an_extraction_into_a_described_helper_names_no_function(tmp_path):
    start, end, ws, snap = _sides(tmp_path, {"greet.py": GREET}, {"greet.py": GREET.replace("+ n", "+ str(n)")})
    goal = "Refactor greet.py: extract the duplicated type validation into one helper, without changing behaviour."
    assert refactor_gaps(goal, start, end, ws, snap) == []


def test_a_move_needs_the_file_in_the_folder(tmp_path):
    goal = "Move greet.py into a src/ folder."
    start, end, ws, snap = _sides(tmp_path, {"greet.py": GREET}, {"greet.py": GREET.replace("+ n", "+ str(n)")})
    assert "src/greet.py" in refactor_gaps(goal, start, end, ws, snap)[0]
    start, end, ws, snap = _sides(tmp_path / "b", {"greet.py": GREET}, {"src/greet.py": GREET})
    assert refactor_gaps(goal, start, end, ws, snap) == []


def test_type_hints_need_more_annotations(tmp_path):
    goal = "Add type hints to greet.py."
    start, end, ws, snap = _sides(tmp_path, {"greet.py": GREET}, {"greet.py": GREET.replace("+ n", "+ str(n)")})
    assert "annotations" in refactor_gaps(goal, start, end, ws, snap)[0]
    typed = GREET.replace("def greet(n):", "def greet(n: str) -> str:")
    start, end, ws, snap = _sides(tmp_path / "b", {"greet.py": GREET}, {"greet.py": typed})
    assert refactor_gaps(goal, start, end, ws, snap) == []


def test_a_reformat_may_change_only_whitespace_and_a_named_extraction_must_appear(tmp_path):
    start, end, ws, snap = _sides(tmp_path, {"greet.py": GREET}, {"greet.py": GREET.replace("    return", "  return")})
    assert refactor_gaps("Re-indent greet.py with two spaces.", start, end, ws, snap) == []
    assert refactor_gaps("Simplify greet.py.", start, end, ws, snap)
    goal = "Extract a helper fmt_greeting() from greet() in greet.py."
    start, end, ws, snap = _sides(tmp_path / "b", {"greet.py": GREET}, {"greet.py": GREET.replace("+ n", "+ str(n)")})
    assert "fmt_greeting" in refactor_gaps(goal, start, end, ws, snap)[0]


def test_a_refactor_that_drops_an_option_changed_behaviour(tmp_path):
    before = 'import sys\ndef greet(n, upper=False):\n    s = "hello, " + n\n    return s.upper() if upper else s\n' \
             'print(greet(sys.argv[-1], "--upper" in sys.argv))\n'
    after = 'import sys\ndef greet(n):\n    return "hello, " + n\nprint(greet(sys.argv[-1]))\n'
    start, end, ws, snap = _sides(tmp_path, {"greet.py": before}, {"greet.py": after})
    assert "--upper" in refactor_gaps("Simplify greet.py without changing its behaviour.", start, end, ws, snap)[0]


HEAD = "import unittest\nfrom calc import add\nclass TestAdd(unittest.TestCase):\n"


@pytest.mark.parametrize(("body", "real"), [
    ("    def test_add(self):\n        self.assertEqual(add(2, 3), add(2, 3))\n", 0),
    ("    def test_add(self):\n        self.assertTrue(True)\n", 0),
    ("    def test_add(self):\n        assert 1 == 1\n", 0),
    ("    def test_add(self):\n        add(2, 3)\n", 0),
    ("    @unittest.skipUnless(False, 'slow')\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n", 0),
    ("    def test_add(self):\n        self.skipTest('later')\n        self.assertEqual(add(2, 3), 5)\n", 0),
    ("    def test_add(self):\n        assert add(2, 3) == 5 or True\n", 0),
    ("    def test_add(self):\n        try:\n            self.assertEqual(add(2, 3), 5)\n"
     "        except AssertionError:\n            pass\n", 0),
    ("    def test_add(self):\n        try:\n            self.assertEqual(add(2, 3), 5)\n        except KeyError:\n"
     "            pass\n", 1),
    ("    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n", 1),
    ("    def test_add(self):\n        with self.assertRaises(TypeError):\n            add(None, 1)\n", 1),
])
def test_tests_that_cannot_fail_count_for_nothing(body, real):
    assert hollow({"test_calc.py": HEAD + body})[0] == real


def test_a_skipped_class_or_module_skips_its_tests():
    body = "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
    assert hollow({"test_calc.py": HEAD.replace("class", "@unittest.skip('x')\nclass") + body})[0] == 0
    module = "import pytest\npytestmark = pytest.mark.skip\ndef test_a():\n    assert f() == 1\n"
    assert hollow({"test_x.py": module})[0] == 0


def test_a_function_the_goal_asks_for_must_be_written(tmp_path):
    goal = "In calc.py, fix mul(a, b) so it returns the product, and add div(a, b) that returns a / b."
    test = {"test_calc.py": "from calc import div\n"}
    start, end, ws, _ = _sides(tmp_path, {"calc.py": "def mul(a, b):\n    return a + b\n", **test},
                               {"calc.py": "def mul(a, b):\n    return a * b\n", **test})
    assert missing_names(goal, ["calc.py"], start, end, ws) == ["div"]
    end = _tree(ws, {"calc.py": "def mul(a, b):\n    return a * b\ndef div(a, b):\n    return a / b\n"})
    assert missing_names(goal, ["calc.py"], start, end, ws) == []
    assert missing_names("Remove the deprecated old() from calc.py.", ["calc.py"], start, end, ws) == []
    assert missing_names("Add a --verbose flag to calc.py.", ["calc.py"], start, end, ws) == ["--verbose"]


@pytest.mark.parametrize(("goal", "gone", "kept"), [
    ("Delete the obsolete old_greet.sh and make greet.sh print hello.", ["old_greet.sh"], ["greet.sh"]),
    ("Add a clean target to the Makefile that removes out.txt.", [], []),
    ("Remove the import from utils.py", [], ["utils.py"]),
    ("Fix greet.sh, then remove old.sh.", ["old.sh"], ["greet.sh"]),
    ("Do not delete keep.txt; fix a.sh", [], ["a.sh"]),
])
def test_files_the_goal_deletes(goal, gone, kept):
    assert files_to_delete(goal) == gone
    assert goal_flags(goal)[1] == kept


OLD_TEST = "import unittest\nfrom calc import add\nclass TestAdd(unittest.TestCase):\n    def test_add(self):\n" \
           "        self.assertEqual(add(2, 3), 5)\n"
NEW_CLASS = "class TestMul(unittest.TestCase):\n    def test_mul(self):\n        self.assertEqual(mul(3, 4), 12)\n"


@pytest.mark.parametrize(("new", "ok"), [
    (OLD_TEST.replace("import add\n", "import add, mul\n") + NEW_CLASS, True),
    (OLD_TEST + NEW_CLASS.replace("        self", "        from calc import mul\n        self"), True),
    (OLD_TEST + "from calc import mul as TestAdd\n", False),
    (OLD_TEST.replace("import add\n", "import add, TestAdd\n"), False),
    (OLD_TEST.replace("import add\n", "import *\n"), False),
    (OLD_TEST + "import unittest.mock\n", False),
    (OLD_TEST.replace("from calc import add\n", "from sys import add\n"), False),
])
def test_extending_a_test_file_may_import_code_under_test(new, ok):
    assert _only_adds_tests(OLD_TEST, new) is ok


def _row(tid: str, before: str, after: str) -> ProjectTest:
    return ProjectTest(id=tid, suite="python -m pytest", before=before, after=after)  # type: ignore[arg-type]


def test_a_goal_that_names_nothing_needs_a_test_named_like_it(tmp_path):
    text = "import greet\ndef test_version():\n    assert greet.VERSION == '1.0'\ndef test_greet_bang():\n" \
           "    assert greet.greet('a').endswith('!')\n"
    start, end, ws, snap = _sides(tmp_path, {"test_greet.py": text}, {"test_greet.py": text})
    rows = [_row("test_greet.py::test_version", "fail", "pass"), _row("test_greet.py::test_greet_bang", "fail", "pass")]
    tie(rows, {}, "Greetings should end with an exclamation mark.", [], start, end, ws, snap)
    assert [r.related for r in rows] == [False, True]
    rows = [_row("test_greet.py::test_version", "fail", "pass")]
    tie(rows, {}, "Fix the failing tests.", [], start, end, ws, snap)
    assert rows[0].related


def test_a_test_that_only_calls_the_named_function_needs_its_definition_changed(tmp_path):
    test = "from calc import mul, fmt\ndef test_table():\n    assert fmt(mul(2, 2)) == '2 x 2 = 4'\n"
    calc = "def mul(a, b):\n    return a + b\ndef fmt(x):\n    return '= %d' % x\n"
    start, end, ws, snap = _sides(tmp_path, {"calc.py": calc, "test_calc.py": test},
                                  {"calc.py": calc.replace("'= %d'", "'2 x 2 = %d'"), "test_calc.py": test})
    rows = [_row("test_calc.py::test_table", "fail", "pass")]
    tie(rows, {}, "Fix mul(a, b) in calc.py so it returns the product.", ["calc.py"], start, end, ws, snap)
    assert not rows[0].related
    end = _tree(ws, {"calc.py": calc.replace("a + b", "a * b")})
    rows = [_row("test_calc.py::test_table", "fail", "pass")]
    tie(rows, {}, "Fix mul(a, b) in calc.py so it returns the product.", ["calc.py"], start, end, ws, snap)
    assert rows[0].related


def test_a_test_the_goal_names_that_still_fails_is_marked(tmp_path):
    test = "from calc import mul, div\ndef test_mul():\n    assert mul(2, 3) == 6\ndef test_div():\n" \
           "    assert div(6, 3) == 2\ndef test_other():\n    assert 1\n"
    start, end, ws, snap = _sides(tmp_path, {"test_calc.py": test}, {"test_calc.py": test})
    rows = [_row("test_calc.py::test_div", "error", "fail"), _row("test_calc.py::test_other", "fail", "fail")]
    tie(rows, {}, "Add div(a, b) to calc.py next to mul(a, b).", ["calc.py"], start, end, ws, snap)
    assert [r.still_failing_named for r in rows] == [True, False]
    rows = [_row("test_calc.py::test_div", "error", "error")]  # no test of the file ran: the runner, not the goal
    tie(rows, {}, "Add div(a, b) to calc.py next to mul(a, b).", ["calc.py"], start, end, ws, snap)
    assert not rows[0].still_failing_named


def test_a_run_check_of_the_project_tests_is_no_proof_when_only_unrelated_tests_flipped():
    from tether.gate.evidence import CheckRun, Evidence
    from tether.gate.proof import proof

    check = CheckRun(command="python3 -m unittest -v test_greet", source="plan", kind="test", after_exit=0,
                     before_exit=1)
    row = _row("test_greet.py::T::test_version", "fail", "pass")
    row.related = False
    assert proof(Evidence(goal="g", before_ran=True, checks=[check], project=[row]))[0] == "none"
    row.related = True
    assert proof(Evidence(goal="g", before_ran=True, checks=[check], project=[row]))[0] == "project"
    own = CheckRun(command="bash greet.sh | grep -x hello!", source="plan", kind="expect", after_exit=0,
                   before_exit=1, authored=True)
    row.related = False
    assert proof(Evidence(goal="g", before_ran=True, checks=[check, own], project=[row]))[0] == "run"


def test_a_test_that_reaches_the_named_function_through_one_call_is_tied(tmp_path):
    app = "from pricing import price\ndef total(xs):\n    return price(sum(xs))\n"
    pricing = "def price(x):\n    return int(x * 100) / 100\n"
    test = "from app import total\ndef test_total():\n    assert total([1.005, 1.0]) == 2.01\n"
    start, end, ws, snap = _sides(tmp_path, {"app.py": app, "pricing.py": pricing, "test_app.py": test},
                                  {"app.py": app, "pricing.py": pricing.replace("int(x * 100) / 100", "round(x, 2)"),
                                   "test_app.py": test})
    rows = [_row("test_app.py::test_total", "fail", "pass")]
    tie(rows, {}, "Fix price(x) so it rounds half up to cents instead of truncating.", [], start, end, ws, snap)
    assert rows[0].related
    end = _tree(ws, {"pricing.py": pricing, "app.py": app.replace("sum(xs)", "sum(xs) + 0.005")})
    rows = [_row("test_app.py::test_total", "fail", "pass")]
    tie(rows, {}, "Fix price(x) so it rounds half up to cents instead of truncating.", [], start, end, ws, snap)
    assert not rows[0].related  # price itself untouched: the flip came from elsewhere


def test_a_goal_named_package_json_is_the_change_only_for_scripts_it_adds(tmp_path):
    from tether.gate.judge import new_scripts_only

    (tmp_path / "package.json").write_text('{"scripts": {"test": "node test.js"}}')
    assert new_scripts_only(["npm run -s greet | grep -x hello"], tmp_path)
    assert not new_scripts_only(["npm test"], tmp_path)  # the person's oracle, rewritten: reviewed as before
    assert not new_scripts_only(["npm run test && npm run greet"], tmp_path)
    assert not new_scripts_only(["node greet.js"], tmp_path)


def test_a_file_other_than_code_the_goal_asks_to_change_and_left_as_it_was_is_a_review_line():
    from tether.common.manifest import FileState
    from tether.gate.evidence import goal_flags
    from tether.gate.named_code import untouched_targets

    same, other = FileState(sha256="a", size=1, mode=0o644), FileState(sha256="b", size=1, mode=0o644)

    def lines(goal: str, changed: tuple[str, ...] = ()) -> list[str]:
        names = goal_flags(goal)[1]
        start = dict.fromkeys(names, same)
        return untouched_targets(goal, names, start, {n: other if n in changed else same for n in names})

    # rt18 f15b: calc.py fixed, README.md never touched, the summary says it was documented
    assert lines("Add mul(a, b) to calc.py and document it in README.md.", ("calc.py",)) == [
        "the goal asks to change README.md, and the run left it as it was before the run"]
    assert lines("Update CHANGELOG.md and add a section on mul to docs/usage.md", ("docs/usage.md",))
    assert lines("Add mul(a, b) to calc.py and document it in README.md.", ("calc.py", "README.md")) == []
    # what the goal reads from, uses or forbids is not a file to change; code may rightly be fixed elsewhere
    assert lines("Fix calc.py; the expected output is in data/expected.txt", ("calc.py",)) == []
    assert lines("Add a helper that uses the settings in config.yaml", ()) == []
    assert lines("Do not edit README.md; fix calc.py", ("calc.py",)) == []
    assert lines("Fix the crash in app.py", ()) == []


def test_a_function_the_goal_asks_for_written_only_as_a_stub_is_missing(tmp_path):  # rt18 f29
    goal = "Add div(a, b) and mod(a, b) to calc.py."
    start, end, ws, _ = _sides(tmp_path, {"calc.py": "def add(a, b):\n    return a + b\n"},
                               {"calc.py": "def div(a, b):\n    return a / b\n\n\ndef mod(a, b):\n    return None\n"})
    assert missing_names(goal, ["calc.py"], start, end, ws) == ["mod"]
    for body in ("pass", "...", "return", '"""Later."""', "raise NotImplementedError", "raise NotImplementedError()"):
        end = _tree(ws, {"calc.py": f"def div(a, b):\n    return a / b\n\n\ndef mod(a, b):\n    {body}\n"})
        assert missing_names(goal, ["calc.py"], start, end, ws) == ["mod"], body
    # an abstract method beside its implementation is the design, not a stub
    end = _tree(ws, {"calc.py": "class Op:\n    def mod(self, a, b):\n        raise NotImplementedError\n\n\n"
                                "class Int(Op):\n    def mod(self, a, b):\n        return a % b\n\n\n"
                                "def div(a, b):\n    return a / b\n"})
    assert missing_names(goal, ["calc.py"], start, end, ws) == []


def test_an_archive_the_goal_names_holding_only_empty_files_is_no_artifact():  # rt18 f30
    import io
    import tarfile
    import zipfile

    from tether.gate.scan import archive_kind

    def tar(files: dict[str, bytes], mode: str = "w:gz") -> bytes:
        out = io.BytesIO()
        with tarfile.open(fileobj=out, mode=mode) as t:
            for name, data in files.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
        return out.getvalue()

    assert archive_kind(tar({"calc/calc.py": b""})) == "blank"
    assert archive_kind(tar({"a.py": b"\n", "b.py": b"TODO\n"}, "w:xz")) == "placeholder"
    assert archive_kind(tar({"calc.py": b"def mul(a, b):\n    return a * b\n", "empty.txt": b""})) == "file"
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as z:
        z.writestr("x.txt", "")
    assert archive_kind(zipped.getvalue()) == "blank"
    assert archive_kind(b"not an archive") == "file"  # what cannot be read is not judged empty
    assert archive_kind(tar({"big.bin": b"\0" * (80 << 20)})) == "file"  # a bomb is not unpacked to be judged
