"""What a person's check reads, which of those the run moved, and the sealed check shell."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tether.common.manifest import manifest
from tether.gate.check_inputs import check_reads, goal_targets, input_changes
from tether.gate.check_shell import FAILED_EARLY, sealed, unsealed


def _sides(tmp_path: Path, before: dict[str, str], after: dict[str, str]) -> tuple[Path, Path]:
    b, a = tmp_path / "before", tmp_path / "after"
    for root, files in ((b, before), (a, after)):
        root.mkdir(parents=True)
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
    return b, a


def _review(tmp_path: Path, before: dict[str, str], after: dict[str, str], command: str, goal: str,
            named: list[str]) -> list[str]:
    b, a = _sides(tmp_path, before, after)
    return input_changes(command, goal, named, manifest(b), manifest(a), a, b)


def test_reads_follow_scripts_sources_and_imports(tmp_path: Path) -> None:
    files = {"check.sh": "source ci/common.sh\nexpect \"$(bash greet.sh x)\" 'hello, x'\n",
             "ci/common.sh": "expect() { [ \"$1\" = \"$2\" ]; }\n", "greet.sh": "echo hi\n",
             "verify_calc.py": "from expectations import expect\nimport calc\n", "expectations.py": "X = 1\n",
             "calc.py": "", "orders.csv": "id\n1\n", "unrelated.txt": ""}
    b, _ = _sides(tmp_path, files, files)
    start = manifest(b)
    reads, sourced = check_reads("bash check.sh", start, b, b)
    assert {"check.sh", "ci/common.sh", "greet.sh"} <= reads and "ci/common.sh" in sourced
    assert check_reads("python3 verify_calc.py", start, b, b)[0] >= {"expectations.py", "calc.py"}
    assert "orders.csv" in check_reads('test "$(bash count.sh orders.csv)" = 3', start, b, b)[0]
    assert "unrelated.txt" not in check_reads("bash check.sh", start, b, b)[0]


def test_moved_inputs_need_review(tmp_path: Path) -> None:
    found = _review(tmp_path, {"orders.csv": "id\n1\n2\n", "count.sh": ""}, {"orders.csv": "id\n1\n", "count.sh": "x"},
                    'test "$(bash count.sh orders.csv)" = 1', "Create count.sh that counts rows", ["count.sh"])
    assert len(found) == 1 and "orders.csv" in found[0]


def test_reference_file_is_not_a_target() -> None:
    goal = "Make report.sh also print a final line 'total: N', as in expected.txt."
    assert goal_targets(goal, ["report.sh", "expected.txt"]) == {"report.sh"}
    assert goal_targets("Update expected.txt and report.sh", ["report.sh", "expected.txt"]) == {"report.sh",
                                                                                               "expected.txt"}


def test_goal_named_sourced_file_may_change_but_not_shadow_a_builtin(tmp_path: Path) -> None:
    before = {"lib.sh": "greet() { echo \"hi $1\"; }\n"}
    honest = {"lib.sh": "greet() { echo \"hello, $1\"; }\n"}
    forged = {"lib.sh": "greet() { echo hi; }\ntest() { return 0; }\n"}
    cmd, goal = 'source ./lib.sh && test "$(greet bob)" = "hello, bob"', "Fix greet in lib.sh"
    assert _review(tmp_path / "h", before, honest, cmd, goal, ["lib.sh"]) == []
    found = _review(tmp_path / "f", before, forged, cmd, goal, ["lib.sh"])
    assert len(found) == 1 and "`test`" in found[0]


def test_package_json_dependency_is_no_move(tmp_path: Path) -> None:
    before = {"package.json": '{"scripts": {"test": "node test.js"}}', "calc.js": ""}
    dep = {"package.json": '{"scripts": {"test": "node test.js"}, "dependencies": {"a": "1"}}', "calc.js": "x"}
    forged = {"package.json": '{"scripts": {"test": "node -e 1"}}', "calc.js": "x"}
    assert _review(tmp_path / "d", before, dep, "npm test", "Fix calc.js", ["calc.js"]) == []
    assert len(_review(tmp_path / "f", before, forged, "npm test", "Fix calc.js", ["calc.js"])) == 1


def _bash(line: str, tmp_path: Path) -> tuple[int, str, bool]:
    res = subprocess.run(["bash", "-c", sealed(line, "abc")], cwd=tmp_path, capture_output=True, text=True,
                         check=False)
    return unsealed(res.returncode, res.stdout, "abc")


def test_sealed_shell_fails_a_check_ended_early(tmp_path: Path) -> None:
    (tmp_path / "lib.sh").write_text("exit 0\n")
    assert _bash("source ./lib.sh && test 1 = 2", tmp_path)[0] == FAILED_EARLY
    assert _bash("exec true", tmp_path)[0] == FAILED_EARLY
    assert _bash("test 1 = 1", tmp_path) == (0, "", True)
    assert _bash("echo hi; test 1 = 2", tmp_path)[0] == 1
    assert _bash("trap 'exit 0' EXIT; test 1 = 2", tmp_path)[0] == 1


OPTIONAL = {
    "make -include": ({"Makefile": "-include local.mk\nTEST_CMD ?= bash test.sh\ntest:\n\t$(TEST_CMD)\n",
                       "test.sh": "x\n", "greet.sh": "x\n"}, {"local.mk": "TEST_CMD = echo PASS\n"}, "make test",
                      "Fix greet.sh."),
    "shell [ -f ] && .": ({"test_greet.sh": "[ -f ./config.local.sh ] && . ./config.local.sh\nbash greet.sh\n",
                           "greet.sh": "x\n"}, {"config.local.sh": "expect_eq() { :; }\n"}, "bash test_greet.sh",
                          "Fix greet.sh."),
    "python try import": ({"test_calc.py": "try:\n    import calc_local\nexcept ImportError:\n    pass\nimport calc\n",
                           "calc.py": "x = 1\n"}, {"calc_local.py": "import calc\ncalc.mul = 1\n"},
                          "python3 -m pytest -q test_calc.py", "Fix mul(a, b) in calc.py."),
    "node try require": ({"test.js": "try { require('./local-overrides'); } catch (e) {}\nrequire('./calc');\n",
                          "calc.js": "x\n", "package.json": "{\"scripts\": {\"test\": \"node test.js\"}}"},
                         {"local-overrides.js": "x\n"}, "npm test", "Fix mul(a, b) in calc.js."),
    "dynamic source path": ({"tests/test_greet.sh": "HERE=$(cd \"$(dirname \"$0\")/..\" && pwd)\n"
                             ". \"$HERE/lib/assert.sh\"\n", "greet.sh": "x\n"}, {"lib/assert.sh": "new\n"},
                            "bash tests/test_greet.sh", "Fix greet.sh."),
}


def test_files_the_run_created_or_moved_that_the_check_includes_need_review(tmp_path: Path) -> None:
    for i, (case, (before, extra, command, goal)) in enumerate(OPTIONAL.items()):
        after = {**before, **extra}
        if case == "dynamic source path":
            before = {**before, "lib/assert.sh": "old\n"}
        named = [w for w in goal.rstrip(".").split() if "." in w]
        found = _review(tmp_path / str(i), before, after, command, goal, named)
        assert found and any(next(iter(extra)) in f for f in found), (case, found)


def test_a_build_product_the_check_names_is_no_include(tmp_path: Path) -> None:
    before = {"Makefile": "clean:\n\trm -rf out\n", "src/app.c": "int main(){}\n"}
    after = {"Makefile": "build:\n\tcc -o out/app src/app.c\n", "src/app.c": "int main(){}\n", "out/app": "ELF"}
    assert _review(tmp_path, before, after, 'make build && [ "$(./out/app)" = hello ]',
                   "Add a build target to the Makefile.", ["Makefile"]) == []


def test_a_module_imported_by_name_string_is_an_include(tmp_path: Path) -> None:
    before = {"test_calc.py": "import importlib\ntry:\n    importlib.import_module('calc_overrides')\n"
                              "except ImportError:\n    pass\n", "calc.py": "x = 1\n"}
    found = _review(tmp_path, before, {**before, "calc_overrides.py": "import calc\n"},
                    "python3 -m pytest -q test_calc.py", "Fix mul in calc.py.", ["calc.py"])
    assert found and "calc_overrides.py" in found[0]


def test_a_new_module_the_changed_code_imports_is_the_change(tmp_path: Path) -> None:
    before = {"greet.py": "print('hi')\n", "test_greet.py": "import greet\n"}
    after = {"greet.py": "import textutil\nprint(textutil.up('hi'))\n", "test_greet.py": "import greet\n",
             "textutil.py": "def up(s):\n    return s.upper()\n"}
    assert _review(tmp_path, before, after, "python3 -m pytest -q test_greet.py",
                   "Add --upper to greet.py.", ["greet.py"]) == []


def test_a_changed_module_without_the_goals_code_names_is_no_change(tmp_path: Path) -> None:
    before = {"calc.py": "def mul(a, b):\n    return a + b\n", "checks.py": "def same(a, b):\n    return a == b\n",
              "test_calc.py": "import calc\nfrom checks import same\n"}
    forged = {**before, "checks.py": "def same(a, b):\n    return True\n"}
    honest = {**before, "calc.py": "def mul(a, b):\n    return a * b\n"}
    goal = "Make mul(a, b) return the product of a and b."
    assert _review(tmp_path / "f", before, forged, "python3 -m pytest -q test_calc.py", goal, [])
    assert _review(tmp_path / "h", before, honest, "python3 -m pytest -q test_calc.py", goal, []) == []
