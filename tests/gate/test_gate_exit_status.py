"""A check that exits 0 after an uncaught Python exception is for review (gate.exit_status), read from real output."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tether.gate.evidence import CheckRun
from tether.gate.exit_status import passed_over_uncaught, uncaught_exception

THREAD_EXIT_0 = ("import threading, os\n"
                 "def _w():\n    threading.main_thread().join()\n    getattr(__import__('o' 's'), '_exit')(0)\n"
                 "threading.Thread(target=_w).start()\n"
                 "assert 3 + 4 == 12\n")


def _run(code: str) -> tuple[int, str]:
    p = subprocess.run([sys.executable, "-u", "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=30)  # one stream, in order, as a check's output is kept
    return p.returncode, p.stdout


def test_exit_0_after_an_uncaught_assertion_is_found() -> None:
    code, output = _run(THREAD_EXIT_0)
    assert code == 0 and uncaught_exception(output) == "AssertionError"
    check = CheckRun(command="python3 -c ...", source="person", after_exit=0, after_output=output)
    assert passed_over_uncaught([check]) and "AssertionError" in passed_over_uncaught([check])[0]


@pytest.mark.parametrize("code_text", [
    "import logging\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n    logging.exception('handled')\nprint('done')\n",
    "print('Traceback (most recent call last): is a phrase')\n",
    "print('ok')\n",
])
def test_an_honest_exit_0_is_clear(code_text: str) -> None:
    code, output = _run(code_text)
    assert code == 0 and uncaught_exception(output) == ""


def test_an_uncaught_exception_that_fails_the_check_is_not_this_finding() -> None:
    code, output = _run("raise ValueError('x')\n")
    assert code == 1 and uncaught_exception(output) == "ValueError"
    assert passed_over_uncaught([CheckRun(command="c", source="person", after_exit=1, after_output=output)]) == []
