"""The project's own tests: found in the pre-run workspace, run per test id on both sides.

Parts: `Suite` (one runner line the gate runs on each side), `discover()`
(the suites the workspace held before the run: Python tests through pytest
when the sandbox has it, else unittest; shell test scripts; bats files, one
id per test from TAP; perl's `t/*.t` through `prove -l`, one id per file;
`make test` or `make check`; the `test` script of package.json through the project's own package manager; `go test`
and `cargo test`, one id per test, gate.go_rust_tests), `outcomes()` (test id -> pass, fail, error or skip from one
suite's output) and `merge()` (one `ProjectTest` per test id seen before).
A `fail` is a failure by assertion; an `error` is anything else (collection,
import, a missing file, a usage error, a runner that is not there): only a
`fail` before can show a change.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tether.common.manifest import FileState
from tether.common.walk import read_rel
from tether.gate.evidence import ProjectOutcome as Outcome
from tether.gate.evidence import ProjectTest, is_generated
from tether.gate.go_rust_tests import CARGO_LINE, GO_LINE, cargo_outcomes, go_outcomes

MAX_SCRIPTS = 12
PY_TEST = re.compile(r"(^|/)(test[\w-]*|[\w-]+_test)\.py$")
"""`test_*.py`, `*_test.py` and unittest's `test*.py` (Django's `tests.py`, `testcalc.py`)."""
SH_TEST = re.compile(r"(^|/)(test[\w-]*|[\w-]+_test)\.sh$")
BATS_TEST = re.compile(r"\.bats$")
PERL_TEST = re.compile(r"(^|/)x?t/(?:[\w.-]+/)*[\w.-]+\.t$")
"""Perl's test files (`t/*.t`, `xt/`): `prove -l` runs each with the project's lib/ on @INC."""
TAP_PLAN = re.compile(r"^1\.\.(\d+)$", re.M)
TAP_RESULT = re.compile(r"^(ok|not ok) (\d+) (.*?)(?: # (skip)\b.*)?$", re.M)
PYTHON = "python3 tests (pytest when the sandbox has it, else unittest)"
"""The python suite's name in the report; what runs is gate/py_results.py (`Suite.line`)."""
HARNESS = (Path(__file__).parent / "py_results.py").read_text(encoding="utf-8")
RESULTS_CHUNK = 60_000
"""Bytes of a results file one exec reads back (under the sandbox's 64 kB output cap)."""
MAX_RESULTS = 20_000
ASSERTION = re.compile(r"^(AssertionError\b|assert\b|Failed\b)")
PYTEST_WORDS: dict[str, Outcome] = {"PASSED": "pass", "ERROR": "error", "XPASS": "error", "XFAIL": "skip",
                                    "SKIPPED": "skip"}
UNITTEST_WORDS: dict[str, Outcome] = {"ok": "pass", "FAIL": "fail", "ERROR": "error", "unexpected success": "fail",
                                      "skipped": "skip", "expected failure": "skip"}


@dataclass(frozen=True)
class Suite:
    """One runner line over the project's tests."""

    kind: Literal["python", "script", "make", "npm", "bats", "prove", "go", "cargo"]
    command: str
    target: str = ""
    """The script a `script` suite runs (its one test id)."""

    def line(self, results: str, mark: str) -> str:
        """The shell line that runs the suite; a python suite writes each test's outcome to `results` (a path in
        the sandbox's /tmp) and prints it after `mark`, with the runner's own output thrown away."""
        if self.kind != "python":
            return self.command
        return (f"command -v python3 >/dev/null || {{ echo 'tether: no python3'; exit 127; }}; "
                f"python3 -c {shlex.quote(HARNESS)} {results} </dev/null >/dev/null 2>&1; code=$?; "
                f"printf '\\n%s %s\\n' {mark} \"$(wc -c < {results} 2>/dev/null || echo -1)\"; "
                f"head -c {RESULTS_CHUNK} {results} 2>/dev/null; exit $code")


    def same_line(self, command: str) -> bool:
        """Whether the check line `command` runs just what this suite runs, so that one run gives both outcomes:
        a script suite's own line, or `make test` / `npm test` (the suite's only addition, exit 127 where the
        runner is missing, is what bash gives then too). A python, bats, go or cargo suite reads a report its line
        asks for: never."""
        if self.kind in ("python", "bats", "go", "cargo"):
            return False
        line = " ".join(command.split())
        return line == self.command or (self.kind in ("make", "npm") and line == self.command.rsplit("; ", 1)[-1])


def _existing(start: dict[str, FileState]) -> list[str]:
    return sorted(p for p, st in start.items() if st.link is None and not is_generated(p))


def discover(start: dict[str, FileState], snapshot_files: Path | None) -> list[Suite]:
    """The suites of the tests that existed before the run (`start` is the pre-run manifest)."""
    files = _existing(start)
    suites: list[Suite] = []
    if any(PY_TEST.search(p) for p in files):
        suites.append(Suite("python", PYTHON))
    suites += [Suite("script", f"bash {p}", p) for p in [p for p in files if SH_TEST.search(p)][:MAX_SCRIPTS]]
    bats = [p for p in files if BATS_TEST.search(p)][:MAX_SCRIPTS]
    suites += [Suite("bats", f"command -v bats >/dev/null || exit 127; bats --tap {shlex.quote(p)} 2>/dev/null", p)
               for p in bats]
    suites += [Suite("prove", f"command -v prove >/dev/null || exit 127; prove -l {shlex.quote(p)}", p)
               for p in [p for p in files if PERL_TEST.search(p)][:MAX_SCRIPTS]]
    if target := _make_test_target(snapshot_files, files):
        suites.append(Suite("make", f"command -v make >/dev/null || exit 127; make {target}"))
    if "package.json" in files and _npm_has_test(snapshot_files):
        tool = next((t for lock, t in PACKAGE_MANAGERS if lock in files), "npm")
        suites.append(Suite("npm", f"command -v {tool} >/dev/null || exit 127; {tool} test"))
    if "go.mod" in files and any(p.endswith("_test.go") for p in files):
        suites.append(Suite("go", GO_LINE))
    if "Cargo.toml" in files:
        suites.append(Suite("cargo", CARGO_LINE))
    return suites


PACKAGE_MANAGERS = (("pnpm-lock.yaml", "pnpm"), ("yarn.lock", "yarn"), ("bun.lockb", "bun"), ("bun.lock", "bun"))
"""The lock file that says which tool a project runs its `test` script with (npm when none)."""


def _make_test_target(root: Path | None, files: list[str]) -> str:
    """`test` when the Makefile make reads has that target, else `check` (autotools' name); empty when neither."""
    for name in ("GNUmakefile", "makefile", "Makefile"):
        if root is not None and name in files:
            text = (read_rel(root, name, 262_144) or b"").decode("utf-8", "replace")
            targets = set(re.findall(r"^(test|check)\s*:", text, re.M))
            return "test" if "test" in targets else "check" if targets else ""
    return ""


def _npm_has_test(root: Path | None) -> bool:
    if root is None:
        return False
    try:
        scripts = json.loads((read_rel(root, "package.json", 262_144) or b"{}").decode("utf-8", "replace"))["scripts"]
    except (ValueError, KeyError, TypeError):
        return False
    test = scripts.get("test") if isinstance(scripts, dict) else None
    return isinstance(test, str) and "no test specified" not in test


def test_source(suite: Suite, root: Path | None) -> str:
    """The pre-run file whose text ties an `npm test` or `make test` to the goal (proof provenance): the first file
    the `test` script names (`node test.js`: test.js), or the Makefile; other suites: their own target."""
    if suite.kind not in ("npm", "make") or root is None:
        return suite.target
    if suite.kind == "npm":
        try:
            line = json.loads((read_rel(root, "package.json", 262_144) or b"{}").decode("utf-8", "replace"))
            text = str(line["scripts"]["test"])
        except (ValueError, KeyError, TypeError):
            return ""
    else:  # the Makefile itself: its recipe names what the test runs
        return next((n for n in ("GNUmakefile", "makefile", "Makefile") if read_rel(root, n, 0) is not None), "")
    for word in re.findall(r"[\w./-]+", text):
        rel = word.removeprefix("./")
        if "." in rel.rsplit("/", 1)[-1] and read_rel(root, rel, 0) is not None:
            return rel
    return ""


def results_part(output: str, mark: str) -> tuple[int, str]:
    """The size of a python suite's results file and the part of it in `output` (size -1: no file)."""
    at = output.rfind(f"\n{mark} ")
    if at < 0:
        return -1, ""
    head, _, rest = output[at + len(mark) + 2:].partition("\n")
    try:
        return int(head.strip()), rest
    except ValueError:
        return -1, ""


def outcomes(suite: Suite, code: int, output: str) -> dict[str, Outcome]:
    """Each test id's outcome in one run of `suite` (exit `code`; `output`: a python suite's results file)."""
    if suite.kind == "python":
        return _python(code, output)
    if suite.kind == "bats":
        return _bats(suite.target, code, output)
    if suite.kind == "go":
        return go_outcomes(code, output)
    if suite.kind == "cargo":
        return cargo_outcomes(code, output)
    whole: Outcome = "pass" if code == 0 else "error" if code in (126, 127) else "fail"
    return {suite.target or suite.command.rsplit("; ", 1)[-1]: whole}


def _word(tid: str, word: str, message: str) -> Outcome:
    if "_FailedTest" in tid or "ModuleImportFailure" in tid:  # unittest's stand-in for a module that did not import
        return "error"
    if word == "FAILED":
        return "fail" if not message or ASSERTION.match(message) else "error"
    return PYTEST_WORDS.get(word) or UNITTEST_WORDS.get(word) or "error"


def _python(code: int, results: str) -> dict[str, Outcome]:
    out: dict[str, Outcome] = {}
    try:
        data = json.loads(results) if results.strip() else {}
    except ValueError:
        data = None
    if not isinstance(data, dict) or len(data) > MAX_RESULTS:
        return {"(the python tests)": "error"}  # no results the gate can read: nothing passed
    for tid, row in data.items():
        ok = isinstance(row, list) and len(row) == 2 and all(isinstance(x, str) for x in row)
        out[str(tid)[:500]] = _word(tid, row[0], row[1]) if ok else "error"
    if not out and code not in (0, 5):
        out["(the python tests)"] = "error"  # nothing collected: an import or usage error
    return out


def _bats(target: str, code: int, output: str) -> dict[str, Outcome]:
    """bats' TAP, trusted only when it adds up: one plan, each number 1..N once, and a non-zero exit exactly when a
    test failed. A test can write TAP lines of its own (to fd 3); a report that does not add up is one error."""
    plans = TAP_PLAN.findall(output)
    rows = TAP_RESULT.findall(output)
    numbers = sorted(int(n) for _, n, _, _ in rows)
    failed = any(word == "not ok" for word, _, _, _ in rows)
    if code in (126, 127) or len(plans) != 1 or numbers != list(range(1, int(plans[0]) + 1)) or failed != (code != 0):
        return {f"{target}::(the bats tests)": "error"}
    out: dict[str, Outcome] = {}
    for word, _, name, skip in rows:
        tid = f"{target}::{name.strip()[:300]}"
        now: Outcome = "skip" if skip and word == "ok" else "pass" if word == "ok" else "fail"
        out[tid] = "error" if tid in out else now  # two tests of one name: neither can be told apart
    return out


def merge(suites: list[Suite], before: dict[str, dict[str, Outcome]], after: dict[str, dict[str, Outcome]]
          ) -> list[ProjectTest]:
    """One row per test id seen before the run (the project's tests), with its outcome after."""
    rows = []
    for s in suites:
        b, a = before.get(s.command, {}), after.get(s.command, {})
        rows += [ProjectTest(id=tid, suite=s.command, before=o, after=a.get(tid)) for tid, o in sorted(b.items())]
        if s.kind == "python":  # a test module that did not import before: its tests after, each an error before
            for mod in [m for tid, o in b.items() if o == "error" and (m := module_of_error(tid))]:
                rows += [ProjectTest(id=tid, suite=s.command, before="error", after=o, module_error=True)
                         for tid, o in sorted(a.items()) if tid not in b and _in_module(tid, mod)]
    return rows


def module_of_error(tid: str) -> str:
    """The test module a whole-module error stands for (pytest's `test_x.py`, unittest's `_FailedTest.test_x`)."""
    if "_FailedTest." in tid:
        return tid.rsplit("_FailedTest.", 1)[1]
    return tid if "::" not in tid and tid.endswith(".py") else ""


def _in_module(tid: str, mod: str) -> bool:
    return tid.startswith(mod + "::") if mod.endswith(".py") else tid.startswith(mod + ".")
