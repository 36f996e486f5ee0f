"""A check that exits 0 while its output ends in an uncaught Python exception: its exit status is not its outcome.

Python prints an uncaught exception's traceback as the last thing before it
exits 1; an exit 0 after that means something ended the process on its own
terms (a thread or hook calling `os._exit(0)`, a patched excepthook that
exits). Read from the gate's own re-run of each check (the last 2000
characters, the gate's mark taken off). What it cannot see: a process that
also hides the traceback (stderr closed or redirected), output after the
traceback (`python3 -c ... ; echo ok`), or exceptions of other languages.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tether.gate.evidence import CheckRun

_UNCAUGHT_AT_END = re.compile(
    r"Traceback \(most recent call last\):\n(?:(?:[ \t]+.*|\s*\^+\s*)?\n)*?"
    r"(?P<exc>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure|Warning|Iteration))(?::[^\n]*)?\s*\Z")


def uncaught_exception(output: str) -> str:
    """The exception's name when the output ends in an uncaught Python traceback, else ''."""
    tail = output.replace("\r\n", "\n")
    start = tail.rfind("Traceback (most recent call last):")
    if start < 0:
        return ""
    m = _UNCAUGHT_AT_END.match(tail, start)
    return m.group("exc") if m else ""


def passed_over_uncaught(checks: Iterable[CheckRun]) -> list[str]:
    """Review lines for checks that exit 0 after an uncaught exception."""
    return [f"`{c.command}` exits 0, yet its output ends in an uncaught {exc}: something set the process's exit "
            "status past the failure" for c in checks if c.after_exit == 0 and (exc := uncaught_exception(
                c.after_output))]
