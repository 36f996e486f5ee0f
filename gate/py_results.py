"""Runs inside the gate's sandbox, never imported by Tether: the project's Python tests, each test id's outcome
written as JSON to the file named by argv[1].

Why a file: the runners' own reports (unittest -v on stderr, pytest -rA on
stdout) share the process's output with whatever the tests print, and the
engine forwards stdout and stderr separately, so under load a test module's
`print("ok")` could land between "test_x ... " and "FAIL" and read as a pass.
pytest when the sandbox has it, else unittest; the words are the runners' own
(gate.project maps them).
"""

import json
import sys

RESULTS = {}
RANK = {"PASSED": 0, "SKIPPED": 0, "XFAIL": 0, "FAILED": 1, "ERROR": 2, "XPASS": 2}


def _put(tid, word, message=""):
    """Keep the worst word per id: a failed subtest or teardown is never hidden by the call's pass."""
    if tid not in RESULTS or RANK.get(word, 2) >= RANK.get(RESULTS[tid][0], 2):
        RESULTS[tid] = [word, message]


def _crash(report):
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    return str(getattr(crash, "message", "") or "")[:200]


class Recorder:
    """A pytest plugin: one word per test id, as pytest -rA would print it."""

    def pytest_runtest_logreport(self, report):
        tid = report.nodeid
        if report.when == "call":
            if hasattr(report, "wasxfail"):
                _put(tid, "XFAIL" if report.skipped else "XPASS")
            elif report.passed:
                _put(tid, "PASSED")
            elif report.failed:
                _put(tid, "FAILED", _crash(report))
            else:
                _put(tid, "SKIPPED")
        elif report.failed:  # setup or teardown failed: an error, whatever the call did
            _put(tid, "ERROR", _crash(report))
        elif report.skipped and report.when == "setup":
            _put(tid, "SKIPPED")

    def pytest_collectreport(self, report):
        if report.failed:
            _put(report.nodeid or "(collection)", "ERROR", _crash(report))


SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox", "site-packages", "build", "dist"}


def test_modules(limit=20000):
    """Every `test*.py` and `*_test.py`: named on pytest's command line, the ones its default patterns miss
    (Django's `tests.py`, `testcalc.py`; unittest finds them) are collected too."""
    import os

    found, seen = [], 0
    for root, dirs, files in os.walk("."):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            seen += 1
            if name.endswith(".py") and (name.startswith("test") or name.endswith("_test.py")):
                found.append(os.path.join(root, name)[2:])
        if seen > limit:
            break
    return found


def run_pytest(pytest):
    files = test_modules()
    missed = [f for f in files if not f.rsplit("/", 1)[-1].startswith("test_") and not f.endswith("_test.py")]
    paths = files if missed else []  # named on the command line, pytest collects them whatever its patterns
    return int(pytest.main(["-q", "-p", "no:cacheprovider", "--continue-on-collection-errors", *paths],
                           plugins=[Recorder()]))


def run_unittest():
    import unittest

    def put(test, word):
        RESULTS[test.id()] = [word, ""]

    class Result(unittest.TextTestResult):
        def addSuccess(self, test):
            super().addSuccess(test)
            put(test, "ok")

        def addFailure(self, test, err):
            super().addFailure(test, err)
            put(test, "FAIL")

        def addError(self, test, err):
            super().addError(test, err)
            put(test, "ERROR")

        def addSkip(self, test, reason):
            super().addSkip(test, reason)
            put(test, "skipped")

        def addExpectedFailure(self, test, err):
            super().addExpectedFailure(test, err)
            put(test, "expected failure")

        def addUnexpectedSuccess(self, test):
            super().addUnexpectedSuccess(test)
            put(test, "unexpected success")

        def addSubTest(self, test, subtest, err):
            super().addSubTest(test, subtest, err)
            if err is not None:
                put(test, "FAIL" if issubclass(err[0], test.failureException) else "ERROR")

    runner = unittest.TextTestRunner(verbosity=2, buffer=True, resultclass=Result)
    prog = unittest.main(module=None, argv=["python3 -m unittest", "discover"], testRunner=runner, exit=False)
    return 0 if prog.result.wasSuccessful() else 1


def main(path):
    code = 2
    try:
        try:
            import pytest
        except ImportError:
            pytest = None
        code = run_pytest(pytest) if pytest is not None else run_unittest()
    except SystemExit as e:  # a usage error
        code = e.code if isinstance(e.code, int) else 2
    finally:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(RESULTS, fh)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
