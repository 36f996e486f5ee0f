"""The gate's own re-run: every check and the project's tests, after and before, each side in a fresh sandbox.

Parts: `Plan` (what to run: the checks, the project's suites, what to lay
over the pre-run copy for whom), `Outcome` (what came of it) and `rerun()`.
The after side runs on a copy of the final workspace in a sandbox of its
own, never in the run's container (nothing the run left in its HOME, /tmp
or processes reaches it), at the same time as the before side; the workspace copy, /tmp and the processes there
are judged after the re-run. The after side runs in two stages: the
project's suites and the person's checks with the run's test code taken out
(gate.stripped: the person's and the project's proof), then every check on
the full copy. The before side runs on the pre-run copy in stages: the
project's tests and the person's checks on the bare snapshot, the person's
checks again with the run's test files laid over it (a flip only they show
is the run's proof), the run's own checks with everything the run wrote but
the change (gate.rerun.own_support). A check line naming the run's mount
runs with the gate's random one.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from tether.common.manifest import diff, manifest
from tether.gate.check_shell import sealed, unsealed
from tether.gate.checks import empty_test_run
from tether.gate.collect import list_processes
from tether.gate.copies import lay
from tether.gate.evidence import CheckRun, real_changes
from tether.gate.project import RESULTS_CHUNK, ProjectTest, Suite, merge, outcomes, results_part
from tether.gate.project import Outcome as TestOutcome
from tether.gate.rerun import fresh, gate_file, gate_token
from tether.gate.scan import outside_files
from tether.gate.stripped import Strip, put_back, strip
from tether.sandbox.base import Sandbox
from tether.sandbox.processes import left_running

OUTPUT_KEEP = 2000
T = TypeVar("T")
MAX_RESULTS_BYTES = 8_000_000


@dataclass
class Plan:
    """What the gate re-runs."""

    checks: list[CheckRun]
    suites: list[Suite]
    workspace: Path
    timeout_s: float
    tests_overlay: list[str] = field(default_factory=list)
    """The run's test files and test config: laid over the pre-run copy for the person's checks and the run's."""
    own_overlay: list[str] = field(default_factory=list)
    """Everything else the run wrote but the change: laid over it for the run's own checks only."""
    strip: Strip = field(default_factory=Strip)
    """The run's test code, taken out of the after copy for the project's suites and the person's proof."""
    snapshot: Path | None = None
    """The pre-run snapshot's files (what `strip` puts back)."""
    mounts: tuple[str, str] = ("", "")
    """(the run's workspace mount, the gate's): a check line naming the first runs with the second."""


@dataclass
class Outcome:
    """What the re-run showed."""

    before_ran: bool = False
    before_note: str = ""
    project: list[ProjectTest] = field(default_factory=list)
    effects: list[str] = field(default_factory=list)
    """Workspace files the after side's re-run added, changed or removed (caches left out), and files it left under
    /tmp or /dev/shm (tool caches and the gate's own HOME left out)."""
    left: list[str] = field(default_factory=list)
    """Processes the after side's re-run left running."""


def discard(starting: Future[Sandbox] | None) -> None:
    """Close a sandbox that was started but will not be used."""
    if starting is not None:
        with contextlib.suppress(Exception):
            starting.result().close()


TIMED_OUT = -1
"""The exit code `_run` reports for a command the gate's timeout stopped: on the before side it shows nothing."""


def _run(box: Sandbox, command: str, plan: Plan, token: str) -> tuple[int, str]:
    """Exit code and output; `TIMED_OUT` when the gate's timeout stopped it (its real code is the kill's)."""
    res = box.exec(fresh(command, token), timeout_s=plan.timeout_s)
    return (TIMED_OUT if res.timed_out else res.exit_code), res.output


def _check(box: Sandbox, command: str, plan: Plan, token: str) -> tuple[int, str]:
    """A check line, sealed: a shell that ended before its last line (an `exit 0` in a sourced file) fails."""
    if plan.mounts[0] and plan.mounts[1]:  # the gate's sandboxes mount the workspace where the run never saw it
        command = re.sub(rf"{re.escape(plan.mounts[0].rstrip('/'))}(?=/|\b|$)", plan.mounts[1].rstrip("/"), command)
    code, output = _run(box, sealed(command, token), plan, token)
    code, output, _ = unsealed(code, output, token)
    return code, output


def _suite(box: Sandbox, suite: Suite, plan: Plan, token: str) -> dict[str, TestOutcome]:
    """One suite's outcomes per test id; a python suite's come from the results file its runner wrote, read back
    in chunks (never from the runner's output, which the tests share)."""
    results, mark = f"/tmp/{token}.json", f"tether-results-{token}"
    code, output = _run(box, suite.line(results, mark), plan, token)
    if code == TIMED_OUT:  # the gate's time ran out: nothing is known, so nothing passed and nothing failed
        return dict.fromkeys(outcomes(suite, 127, ""), "error")
    if suite.kind != "python":
        return outcomes(suite, code, output)
    size, text = results_part(output, mark)
    while 0 < len(text) < size and len(text) < MAX_RESULTS_BYTES:
        _, more = _run(box, f"tail -c +{len(text) + 1} {results} | head -c {RESULTS_CHUNK}", plan, token)
        if not more:
            break
        text += more
    if len(text) != size:  # no file, or one cut short: nothing the gate can read passed
        return {"(the python tests)": "error"}
    return outcomes(suite, code, text)


def _after(plan: Plan, box: Sandbox, folder: Path, out: Outcome) -> dict[str, dict[str, TestOutcome]]:
    """The project's suites and the person's checks without the run's tests (gate.stripped), then, with them put
    back, every check; what the re-run wrote or left is judged after each stage."""
    token = gate_token()
    baseline = list_processes(box)
    person = [c for c in plan.checks if c.source == "person"]
    stash = folder.parent / f"{folder.name}.stash"  # beside the mounted copy, never in it
    moved = strip(folder, stash, plan.strip, plan.snapshot) if plan.strip else []
    start = manifest(folder)  # all a check writes in the workspace is judged (it may run code the run wrote)
    try:
        seen = {s.command: _suite(box, s, plan, token) for s in plan.suites}
        suites_left = set(outside_files(box) or []) if person else set()
        for c in person if plan.strip else []:
            code, _ = _check(box, c.command, plan, token)
            c.after_bare_exit = 137 if code == TIMED_OUT else code
        out.effects = real_changes(diff(start, manifest(folder)).changed)
    finally:
        if moved:
            put_back(folder, stash, moved)
    start = manifest(folder)
    for c in person:  # what the person's own checks leave in /tmp (a scratch file) is the person's doing
        code, output = _check(box, c.command, plan, token)
        code = 137 if code == TIMED_OUT else code
        c.after_exit, c.empty, c.after_output = code, empty_test_run(output), output[-OUTPUT_KEEP:]
        if not plan.strip:
            c.after_bare_exit = code
    theirs = set(outside_files(box) or []) - suites_left if person else set()
    for c in [c for c in plan.checks if c.source != "person"]:
        code, output = _check(box, c.command, plan, token)
        code = 137 if code == TIMED_OUT else code  # a check the gate stopped does not pass now
        c.after_exit, c.empty, c.after_output = code, empty_test_run(output), output[-OUTPUT_KEEP:]
    out.effects += [e for e in real_changes(diff(start, manifest(folder)).changed) if e not in out.effects]
    left = outside_files(box)
    out.effects += (["/tmp and /dev/shm (could not be listed)"] if left is None
                    else [p for p in left if not gate_file(p, token) and p not in theirs])
    now = list_processes(box, baseline)
    if now is None or baseline is None:
        out.left = ["the processes after the gate's re-run could not be listed"]
    else:
        out.left = [f"after the gate's re-run: {p.describe()}" for p in left_running(now, baseline)]
    return seen


def _before(plan: Plan, box: Sandbox, folder: Path) -> tuple[dict[str, dict[str, TestOutcome]], dict[int, int]]:
    """The project's suites and every check on the pre-run copy, in stages; the checks' exit codes by index (the
    after side runs at the same time, so which checks pass now is not known yet)."""
    token = gate_token()
    seen = {s.command: _suite(box, s, plan, token) for s in plan.suites}
    codes: dict[int, int] = {}
    for i, c in enumerate(plan.checks):  # the bare pre-run copy: what the person's proof is judged against
        if c.source == "person" and plan.strip:
            codes[-1 - i], _ = _check(box, c.command, plan, token)
    lay(folder, plan.workspace, plan.tests_overlay)
    for i, c in enumerate(plan.checks):
        if c.source == "person":
            codes[i], _ = _check(box, c.command, plan, token)
            codes.setdefault(-1 - i, codes[i])
    lay(folder, plan.workspace, plan.own_overlay)
    for i, c in enumerate(plan.checks):
        if c.source != "person":
            codes[i], _ = _check(box, c.command, plan, token)
    return seen, codes


def _side(starting: Future[Sandbox], work: Callable[[Sandbox], T]) -> T:
    box = starting.result()
    try:
        return work(box)
    finally:
        box.close()


def rerun(
    plan: Plan,
    after: tuple[Future[Sandbox], Path] | None,
    before: tuple[Future[Sandbox], Path] | None,
    on_error: Callable[[BaseException], str] = lambda e: f"{type(e).__name__}: {e}",
) -> Outcome:
    """Run `plan` on the after side and the before side at once; both sandboxes are closed here in any case.

    A check's result before counts only where it passes now (one failing now
    fails R08 whatever it did before). The after side's failure is raised;
    the before side's is R07's note.
    """
    out = Outcome()
    if after is None:
        discard(before[0] if before else None)
        out.before_note = "no check to run"
        return out
    with ThreadPoolExecutor(max_workers=1) as pool:
        pre = pool.submit(_side, before[0], lambda box: _before(plan, box, before[1])) if before else None
        try:
            seen_after = _side(after[0], lambda box: _after(plan, box, after[1], out))
        finally:
            try:
                seen_before, codes = pre.result() if pre else ({}, {})
                failed = None
            except Exception as e:  # the pre-run side failing must not crash the gate: R07 says why
                failed = e
    if before is None:
        out.before_note = "no pre-run snapshot"
        out.project = merge(plan.suites, {}, seen_after)
        return out
    if failed is not None:
        out.before_note = on_error(failed)
        return out
    for i, code in codes.items():
        # a check the gate's timeout stopped before the run's change shows nothing (never a fail-to-pass)
        c = plan.checks[i if i >= 0 else -1 - i]
        if c.passed_after and code != TIMED_OUT:
            if i >= 0:
                c.before_exit = code
            else:
                c.before_bare_exit = code
    out.before_ran = True
    out.project = merge(plan.suites, seen_before, seen_after)
    return out
