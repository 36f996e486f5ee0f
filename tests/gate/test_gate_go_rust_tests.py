"""Go's and cargo's test reports as the gate reads them: one id per test, trusted only when the runner's own counts
agree; discovery of those suites and of the package manager and make target a project really uses.

The reports are the runners' own formats (`go test -json` events, libtest's lines as cargo prints them, filtered
by the suite's line to what the parser reads); no toolchain is in the test image, so the lines are written here."""

from __future__ import annotations

import json
import subprocess

from tether.common.manifest import manifest
from tether.gate.project import Suite, discover, outcomes
from tether.gate.tamper import build_test_changes

GO = Suite("go", "go")
CARGO = Suite("cargo", "cargo")
PKG = "example.com/calc"


def _go(*events: dict) -> str:
    return "\n".join(json.dumps({"Time": "2026-12-02T10:00:00Z", **e}, separators=(",", ":")) for e in events) + "\n"


def test_go_one_id_per_test_with_the_package_result_agreeing():
    report = _go({"Action": "pass", "Package": PKG, "Test": "TestAdd", "Elapsed": 0},
                 {"Action": "fail", "Package": PKG, "Test": "TestSub", "Elapsed": 0},
                 {"Action": "skip", "Package": PKG, "Test": "TestSlow", "Elapsed": 0},
                 {"Action": "pass", "Package": PKG, "Test": "TestAdd/negative", "Elapsed": 0},
                 {"Action": "fail", "Package": PKG, "Elapsed": 0.01},
                 {"Action": "skip", "Package": PKG + "/cmd", "Elapsed": 0})  # [no test files]
    assert outcomes(GO, 1, report) == {f"{PKG}::TestAdd": "pass", f"{PKG}::TestSub": "fail",
                                       f"{PKG}::TestSlow": "skip", f"{PKG}::TestAdd/negative": "pass"}
    passing = _go({"Action": "pass", "Package": PKG, "Test": "TestAdd", "Elapsed": 0},
                  {"Action": "pass", "Package": PKG, "Elapsed": 0})
    assert outcomes(GO, 0, passing) == {f"{PKG}::TestAdd": "pass"}


def test_go_a_package_that_did_not_build_is_an_error_not_a_failure_by_assertion():
    report = _go({"Action": "fail", "Package": PKG, "Elapsed": 0, "FailedBuild": PKG + " [" + PKG + ".test]"})
    assert outcomes(GO, 1, report) == {f"{PKG}::(build or package)": "error"}


def test_go_a_report_that_does_not_add_up_is_one_error():
    whole = {"(the go tests)": "error"}
    # a test printed a pass for another test that also failed: two results for one id
    twice = _go({"Action": "fail", "Package": PKG, "Test": "TestSub", "Elapsed": 0},
                {"Action": "pass", "Package": PKG, "Test": "TestSub", "Elapsed": 0},
                {"Action": "fail", "Package": PKG, "Elapsed": 0})
    assert outcomes(GO, 1, twice) == whole
    # every test "passed" but the package failed (a TestMain exit, a panic after): nothing can be told apart
    hidden = _go({"Action": "pass", "Package": PKG, "Test": "TestSub", "Elapsed": 0},
                 {"Action": "fail", "Package": PKG, "Elapsed": 0})
    assert outcomes(GO, 1, hidden) == whole
    # the exit code says a failure the report does not show, or the other way round
    ok = _go({"Action": "pass", "Package": PKG, "Test": "TestAdd", "Elapsed": 0},
             {"Action": "pass", "Package": PKG, "Elapsed": 0})
    assert outcomes(GO, 1, ok) == whole
    bad = _go({"Action": "fail", "Package": PKG, "Test": "TestAdd", "Elapsed": 0},
              {"Action": "fail", "Package": PKG, "Elapsed": 0})
    assert outcomes(GO, 0, bad) == whole
    # tests with no package result: lines printed, not the runner's
    assert outcomes(GO, 0, _go({"Action": "pass", "Package": PKG, "Test": "TestAdd"})) == whole
    assert outcomes(GO, 127, "") == whole
    assert outcomes(GO, 2, "go: cannot find main module\n") == whole


def _cargo(*blocks: str) -> str:
    return "".join(blocks)


UNIT = ("     Running unittests src/lib.rs (target/debug/deps/calc-3f2a1b)\n"
        "running 3 tests\n"
        "test tests::adds ... ok\n"
        "test tests::slow ... ignored, needs a database\n"
        "test tests::fails ... FAILED\n"
        "test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s\n")
INTEGRATION = ("     Running tests/it.rs (target/debug/deps/it-9c8d7e)\n"
               "running 1 test\n"
               "test integration ... ok\n"
               "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n")
DOC = ("   Doc-tests calc\n"
       "running 1 test\n"
       "test src/lib.rs - add (line 3) ... ok\n"
       "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.10s\n")


def test_cargo_one_id_per_test_and_binary():
    got = outcomes(CARGO, 101, _cargo(UNIT, INTEGRATION, DOC))
    assert got == {"calc unittests src/lib.rs::tests::adds": "pass", "calc unittests src/lib.rs::tests::slow": "skip",
                   "calc unittests src/lib.rs::tests::fails": "fail", "it tests/it.rs::integration": "pass",
                   "calc doc-tests::src/lib.rs - add (line 3)": "pass"}
    # another build of the same crate (a new dependency in Cargo.toml): another hash, the same ids
    again = INTEGRATION.replace("it-9c8d7e", "it-0a1b2c3d4e5f6a7b")
    assert outcomes(CARGO, 0, _cargo(again, DOC)) == {"it tests/it.rs::integration": "pass",
                                                    "calc doc-tests::src/lib.rs - add (line 3)": "pass"}
    # two crates of a workspace each with `unittests src/lib.rs`: told apart by the crate
    other = UNIT.replace("calc-3f2a1b", "parser-77aa88").replace("FAILED. 1 passed; 1 failed", "ok. 2 passed; 0 failed")
    other = other.replace("tests::fails ... FAILED", "tests::fails ... ok")
    assert len(outcomes(CARGO, 101, _cargo(UNIT, other))) == 6


def test_cargo_a_report_that_does_not_add_up_is_one_error():
    whole = {"(the cargo tests)": "error"}
    # a test wrote `test tests::fails ... ok` to stdout past libtest's capture: one row more than it ran
    forged = UNIT.replace("test tests::fails ... FAILED\n", "test tests::fails ... ok\ntest tests::fails ... FAILED\n")
    assert outcomes(CARGO, 101, forged) == whole
    # the same count, but the rows do not match the summary's passed/failed
    swapped = UNIT.replace("tests::fails ... FAILED", "tests::fails ... ok")
    assert outcomes(CARGO, 101, swapped) == whole
    assert outcomes(CARGO, 101, UNIT.rsplit("test result", 1)[0]) == whole  # a binary that never finished
    assert outcomes(CARGO, 0, UNIT) == whole  # a failure but exit 0
    assert outcomes(CARGO, 101, "error[E0425]: cannot find value `x` in this scope\n") == whole  # did not build
    assert outcomes(CARGO, 127, "") == whole


def test_discover_go_cargo_and_the_project_s_own_package_manager_and_make_target(tmp_path):
    (tmp_path / "go.mod").write_text("module example.com/calc\n\ngo 1.21\n")
    (tmp_path / "calc_test.go").write_text("package calc\n")
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "calc"\nversion = "0.1.0"\n')
    (tmp_path / "package.json").write_text('{"scripts": {"test": "node test.js"}}')
    (tmp_path / "pnpm-lock.yaml").write_text("lockfileVersion: '9.0'\n")
    (tmp_path / "Makefile").write_text("all:\n\ttrue\ncheck:\n\t./run-checks\n")
    suites = discover(manifest(tmp_path), tmp_path)
    lines = {s.kind: s.command.rsplit("; ", 1)[-1] for s in suites if s.kind in ("make", "npm")}
    assert lines == {"make": "make check", "npm": "pnpm test"}
    kinds = [s.kind for s in suites]
    assert "go" in kinds and "cargo" in kinds
    (tmp_path / "pnpm-lock.yaml").unlink()
    (tmp_path / "yarn.lock").write_text("")
    (tmp_path / "Makefile").write_text("check:\n\ttrue\ntest:\n\ttrue\n")
    lines = {s.kind: s.command.rsplit("; ", 1)[-1] for s in discover(manifest(tmp_path), tmp_path)}
    assert lines["npm"] == "yarn test" and lines["make"] == "make test"
    (tmp_path / "calc_test.go").unlink()  # a module with no tests: no go suite
    assert "go" not in [s.kind for s in discover(manifest(tmp_path), tmp_path)]


def test_the_suite_lines_keep_build_output_out_of_the_workspace_and_report_exit_127_without_the_runner(tmp_path):
    for suite in discover({"go.mod": manifest_entry(tmp_path), "x_test.go": manifest_entry(tmp_path),
                           "Cargo.toml": manifest_entry(tmp_path)}, None):
        assert "$HOME" in suite.command  # the gate's HOME, under its own /tmp name
        done = subprocess.run(["/bin/bash", "-c", suite.command], env={"PATH": "/nonexistent", "HOME": str(tmp_path)},
                              capture_output=True, text=True, check=False)
        assert done.returncode == 127
        assert outcomes(suite, 127, done.stdout) in ({"(the go tests)": "error"}, {"(the cargo tests)": "error"})


def manifest_entry(tmp_path):
    (tmp_path / "f").write_text("x")
    return manifest(tmp_path)["f"]


def test_a_new_go_work_or_cargo_config_rewrites_how_the_tests_run(tmp_path):
    before, after = tmp_path / "before", tmp_path / "after"
    for root in (before, after):
        root.mkdir()
        (root / "Cargo.toml").write_text('[package]\nname = "calc"\n')
        (root / "go.mod").write_text("module m\n")
    (after / ".cargo").mkdir()
    (after / ".cargo" / "config.toml").write_text('[target.x86_64-unknown-linux-gnu]\nrunner = "./fake-pass.sh"\n')
    (after / "go.work").write_text("go 1.21\nuse ./shadow\n")
    lines = build_test_changes(["go", "cargo"], manifest(before), manifest(after), after, before)
    assert any(".cargo/config.toml" in line and "`cargo test`" in line for line in lines)
    assert any("go.work" in line and "`go test`" in line for line in lines)
    assert build_test_changes(["go", "cargo"], manifest(before), manifest(before), before, before) == []
