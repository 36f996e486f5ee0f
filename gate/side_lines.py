"""One line run in a side of the gate's re-run: `Lines` (a check, sealed and with the gate's mount; a suite, per
test id), `shared()` (suites a person's check runs as it stands) and `TmpListings` (the side's /tmp, listed only
when something ran since)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import cast

from tether.gate.check_shell import sealed, unsealed
from tether.gate.evidence import CheckRun
from tether.gate.project import RESULTS_CHUNK, Suite, outcomes, results_part
from tether.gate.project import Outcome as TestOutcome
from tether.gate.rerun import fresh
from tether.gate.scan import outside_files
from tether.sandbox.base import Sandbox

MAX_RESULTS_BYTES = 8_000_000
TIMED_OUT = -1
"""The exit code `Lines` reports for a command the gate's timeout stopped: on the before side it shows nothing."""


@dataclass
class Lines:
    """How one side runs its lines: in `box`, each in a fresh shell with the side's `token` (its HOME, results)."""

    box: Sandbox
    timeout_s: float
    mounts: tuple[str, str]
    """(the run's workspace mount, the gate's): a check line naming the first runs with the second."""
    token: str

    def run(self, command: str) -> tuple[int, str]:
        """Exit code and output; `TIMED_OUT` when the gate's timeout stopped it (its real code is the kill's)."""
        res = self.box.exec(fresh(command, self.token), timeout_s=self.timeout_s)
        return (TIMED_OUT if res.timed_out else res.exit_code), res.output

    def check(self, command: str) -> tuple[int, str]:
        """A check line, sealed: a shell that ended before its last line (an `exit 0` in a sourced file) fails."""
        run_mount, gate_mount = self.mounts
        if run_mount and gate_mount:  # the gate's sandboxes mount the workspace where the run never saw it
            command = re.sub(rf"{re.escape(run_mount.rstrip('/'))}(?=/|\b|$)", gate_mount.rstrip("/"), command)
        code, output = self.run(sealed(command, self.token))
        code, output, _ = unsealed(code, output, self.token)
        return code, output

    def suite(self, suite: Suite) -> dict[str, TestOutcome]:
        """One suite's outcomes per test id; a python suite's come from the results file its runner wrote, read
        back in chunks (never from the runner's output, which the tests share)."""
        results, mark = f"/tmp/{self.token}.json", f"tether-results-{self.token}"
        code, output = self.run(suite.line(results, mark))
        if code == TIMED_OUT:  # the gate's time ran out: nothing is known, so nothing passed and nothing failed
            return dict.fromkeys(outcomes(suite, 127, ""), "error")
        if suite.kind != "python":
            return outcomes(suite, code, output)
        size, text = results_part(output, mark)
        while 0 < len(text) < size and len(text) < MAX_RESULTS_BYTES:
            _, more = self.run(f"tail -c +{len(text) + 1} {results} | head -c {RESULTS_CHUNK}")
            if not more:
                break
            text += more
        if len(text) != size:  # no file, or one cut short: nothing the gate can read passed
            return {"(the python tests)": "error"}
        return outcomes(suite, code, text)


def shared(suites: list[Suite], person: list[CheckRun]) -> dict[str, CheckRun]:
    """The suites whose line a person's check runs as it stands (`bash test.sh` both), by suite line: one run of
    that check, on the state the suite runs on, gives the suite's outcome too (gate.project.Suite.same_line)."""
    out: dict[str, CheckRun] = {}
    for s in suites:
        check = next((c for c in person if s.same_line(c.command)), None)
        if check is not None:
            out[s.command] = check
    return out


def as_suite(suite: Suite, code: int, output: str) -> dict[str, TestOutcome]:
    """A shared suite's outcomes from its person's check run (stopped by the gate's timeout: nothing known)."""
    if code == TIMED_OUT:
        return dict.fromkeys(outcomes(suite, 127, ""), "error")
    return outcomes(suite, code, output)


class TmpListings:
    """A fresh side's /tmp and /dev/shm, listed (gate.scan.outside_files) only when something ran since the last
    listing: a fresh side's are empty, and a listing with nothing run since is the last one again."""

    def __init__(self, box: Sandbox) -> None:
        self._box, self._last, self._stale = box, cast("list[str] | None", []), False

    def ran(self) -> None:
        self._stale = True

    def now(self) -> list[str] | None:
        if self._stale:
            self._last, self._stale = outside_files(self._box), False
        return self._last
