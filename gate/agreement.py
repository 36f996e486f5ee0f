"""A person's Python test run and the gate's own runner of the same tests must agree.

The exit status of `python3 -m unittest test_calc` or `pytest test_calc.py`
is the process's, and code under test can set it at shutdown (an `atexit`
hook through ctypes, `os.execv`, a finalizer), past any report. The gate's
project channel runs the same test modules through its own harness
(gate/py_results.py), which records each test's outcome in a file as it
runs: a process ended early leaves no results, and nothing there passed.
So when the person's check is a recognisable Python test run that passed
after the run, every project test it covers must have passed there too; a
test the harness saw fail, error or vanish (deselected, not collected) is
disagreement, and a person reviews it with the ids as evidence. What it
cannot see: tests that are not the project's (written by the run), and a
check whose test selection it cannot read (then it covers every test).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from tether.gate.evidence import CheckRun, ProjectTest
from tether.gate.project import PYTHON

RUNNER = re.compile(r"(^|[\s;&|(/])(py\.?test|python[\d.]*\s+(-\w+\s+)*-m\s+(pytest|unittest))\b")
"""A Python test run: `pytest`, `py.test`, `python3 -m pytest`, `python -m unittest` (after `cd x &&`, `env ...`)."""
UNREAD = re.compile(r"\s(-k|-m|--deselect|--lf|--last-failed|--sw|--stepwise|-p|--pyargs|-c|--rootdir)(\s|=)")
"""Selections the gate does not read (a keyword or marker expression, a plugin): no comparison is made."""
SHOWN = 5


def _covers(command: str, tid: str) -> bool:
    """Whether the check's words select this test id (`test_calc.py`, `test_calc`, `tests/`, `file::Class`,
    `test_calc.TestCalc.test_mul`)."""
    path, _, rest = tid.partition("::")
    module = path.removesuffix(".py").replace("/", ".")
    dotted = f"{module}.{rest.replace('::', '.')}" if rest else module
    words = [w.strip("'\"").removeprefix("./") for w in command.split()]
    for w in words:
        if w in (path, module) or w in (tid, dotted) or tid.startswith(f"{w}::") or dotted.startswith(f"{w}."):
            return True
        folder = w.rstrip("/")
        if "." in posixpath.basename(folder):
            continue
        if folder and (path.startswith(folder + "/") or module.startswith(folder.replace("/", ".") + ".")):
            return True
    return False


def _selects(command: str, start: int) -> bool:
    """Whether the runner is given any positional word (a test file, module, folder or id: then it runs only
    those, which may be none of the project's), else it runs them all."""
    words = re.split(r"\s*(?:&&|\|\||[;|&])\s*", command[start:], maxsplit=1)[0].split()
    return any(not w.startswith("-") for w in words)


def disagreements(checks: Sequence[CheckRun], project: Sequence[ProjectTest]) -> list[str]:
    """Review lines for person checks that passed while the gate's own runner saw their tests not pass."""
    python = [t for t in project if t.suite == PYTHON]
    if not python:
        return []
    out = []
    for c in checks:
        runner = RUNNER.search(c.command)
        if c.source != "person" or c.after_exit != 0 or c.skipped or not runner or UNREAD.search(
                c.command, runner.end()):
            continue
        chosen = [t for t in python if _covers(c.command, t.id)] if _selects(c.command, runner.end()) else python
        bad = [t for t in chosen if t.after in ("fail", "error") or t.after is None and t.before is not None]
        if not bad:
            continue
        shown = ", ".join(f"{t.id} ({t.after or 'not run'})" for t in bad[:SHOWN])
        more = f" and {len(bad) - SHOWN} more" if len(bad) > SHOWN else ""
        out.append(f"tampering: your check `{c.command}` exited 0, but the gate's own runner of the same tests "
                   f"records {shown}{more}: the exit status is not the tests'")
    return out
