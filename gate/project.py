"""The project's own tests: found in the pre-run workspace, run per test id on both sides.

Parts: `Suite` (one runner line the gate runs on each side), `discover()`
(the suites the workspace held before the run: Python tests through pytest
when the sandbox has it, else unittest; shell test scripts; `make test`;
`npm test`), `outcomes()` (test id -> pass, fail, error or skip from one
suite's output) and `merge()` (one `ProjectTest` per test id seen before).
A `fail` is a failure by assertion; an `error` is anything else (collection,
import, a missing file, a usage error, a runner that is not there): only a
`fail` before can show a change.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tether.common.manifest import FileState
from tether.common.walk import read_rel
from tether.gate.evidence import ProjectOutcome as Outcome
from tether.gate.evidence import ProjectTest, is_generated

MAX_SCRIPTS = 12
PY_TEST = re.compile(r"(^|/)(test_[\w-]*|[\w-]+_test)\.py$")
SH_TEST = re.compile(r"(^|/)(test[\w-]*|[\w-]+_test)\.sh$")
PYTHON = (
    "command -v python3 >/dev/null || { echo 'tether: no python3'; exit 127; }; "
    "if python3 -c 'import pytest' 2>/dev/null; "
    "then python3 -m pytest -rA -q -p no:cacheprovider --continue-on-collection-errors; "
    "else python3 -m unittest discover -v -b; fi"
)
"""pytest when the sandbox has it (ids per test with -rA), else unittest (-v names each test, -b keeps prints out)."""
UNITTEST = re.compile(
    r"^(\w+) \(([\w.]+)\)[^\n]*?(?:\n[^\n]*?)? \.\.\. (ok|FAIL|ERROR|skipped|expected failure|unexpected success)",
    re.M,
)
PYTEST = re.compile(r"^(PASSED|FAILED|ERROR|XPASS|XFAIL) ([^\s(]\S*?(?:::\S+|\.py))(?: - (.*))?$", re.M)
ASSERTION = re.compile(r"^(AssertionError\b|assert\b|Failed\b)")


@dataclass(frozen=True)
class Suite:
    """One runner line over the project's tests."""

    kind: Literal["python", "script", "make", "npm"]
    command: str
    target: str = ""
    """The script a `script` suite runs (its one test id)."""


def _existing(start: dict[str, FileState]) -> list[str]:
    return sorted(p for p, st in start.items() if st.link is None and not is_generated(p))


def discover(start: dict[str, FileState], snapshot_files: Path | None) -> list[Suite]:
    """The suites of the tests that existed before the run (`start` is the pre-run manifest)."""
    files = _existing(start)
    suites: list[Suite] = []
    if any(PY_TEST.search(p) for p in files):
        suites.append(Suite("python", PYTHON))
    suites += [Suite("script", f"bash {p}", p) for p in [p for p in files if SH_TEST.search(p)][:MAX_SCRIPTS]]
    if any(p in ("Makefile", "makefile", "GNUmakefile") for p in files) and _make_has_test(snapshot_files, files):
        suites.append(Suite("make", "command -v make >/dev/null || exit 127; make test"))
    if "package.json" in files and _npm_has_test(snapshot_files):
        suites.append(Suite("npm", "command -v npm >/dev/null || exit 127; npm test"))
    return suites


def _make_has_test(root: Path | None, files: list[str]) -> bool:
    for name in ("GNUmakefile", "makefile", "Makefile"):
        if root is not None and name in files:
            text = (read_rel(root, name, 262_144) or b"").decode("utf-8", "replace")
            return re.search(r"^(test|check)\s*:", text, re.M) is not None
    return False


def _npm_has_test(root: Path | None) -> bool:
    if root is None:
        return False
    try:
        scripts = json.loads((read_rel(root, "package.json", 262_144) or b"{}").decode("utf-8", "replace"))["scripts"]
    except (ValueError, KeyError, TypeError):
        return False
    test = scripts.get("test") if isinstance(scripts, dict) else None
    return isinstance(test, str) and "no test specified" not in test


def outcomes(suite: Suite, code: int, output: str) -> dict[str, Outcome]:
    """Each test id's outcome in one run of `suite` (exit `code`, `output`)."""
    if suite.kind == "python":
        return _python(code, output)
    whole: Outcome = "pass" if code == 0 else "error" if code in (126, 127) else "fail"
    return {suite.target or suite.command.rsplit("; ", 1)[-1]: whole}


def _python(code: int, output: str) -> dict[str, Outcome]:
    out: dict[str, Outcome] = {}
    for name, where, word in UNITTEST.findall(output):
        tid = where if where.endswith("." + name) else f"{where}.{name}"
        if "_FailedTest" in where or "ModuleImportFailure" in where:
            out[tid] = "error"
            continue
        out[tid] = {"ok": "pass", "FAIL": "fail", "ERROR": "error", "unexpected success": "fail"}.get(word, "skip")
    for word, tid, message in PYTEST.findall(output):
        if word == "PASSED":
            out[tid] = "pass"
        elif word == "FAILED":
            out[tid] = "fail" if not message or ASSERTION.match(message) else "error"
        elif word in ("ERROR", "XPASS"):
            out[tid] = "error"
        else:
            out[tid] = "skip"
    if not out and code not in (0, 5):
        out["(the python tests)"] = "error"  # nothing collected: an import or usage error
    return out


def merge(suites: list[Suite], before: dict[str, dict[str, Outcome]], after: dict[str, dict[str, Outcome]]
          ) -> list[ProjectTest]:
    """One row per test id seen before the run (the project's tests), with its outcome after."""
    rows = []
    for s in suites:
        b, a = before.get(s.command, {}), after.get(s.command, {})
        rows += [ProjectTest(id=tid, suite=s.command, before=o, after=a.get(tid)) for tid, o in sorted(b.items())]
    return rows
