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
runs with the gate's random one (gate.side_lines runs each line). A suite
a person's check runs as it stands runs once per side, as that check.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from tether.common.manifest import diff, manifest
from tether.gate.checks import empty_test_run
from tether.gate.collect import list_processes
from tether.gate.copies import lay
from tether.gate.evidence import CheckRun, real_changes
from tether.gate.project import Outcome as TestOutcome
from tether.gate.project import ProjectTest, Suite, merge
from tether.gate.rerun import gate_file, gate_token
from tether.gate.side_lines import TIMED_OUT, Lines, TmpListings, as_suite
from tether.gate.side_lines import shared as shared_suites
from tether.gate.stripped import Strip, put_back, strip
from tether.gate.warm_side import HandedSide
from tether.sandbox.base import Sandbox
from tether.sandbox.processes import Proc, left_running

OUTPUT_KEEP = 2000
T = TypeVar("T")


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


def _start_processes(box: Sandbox) -> list[Proc] | None:
    """R15's baseline of a fresh side: listed by the warm start, before anything ran in it, or now."""
    listed = box.start_processes if isinstance(box, HandedSide) else None
    return listed if listed is not None else list_processes(box)


def _record(c: CheckRun, code: int, output: str) -> None:
    code = 137 if code == TIMED_OUT else code  # a check the gate stopped does not pass now
    c.after_exit, c.empty, c.after_output = code, empty_test_run(output), output[-OUTPUT_KEEP:]


def _exit(code: int) -> int:
    return 137 if code == TIMED_OUT else code


def _after(plan: Plan, box: Sandbox, folder: Path, out: Outcome) -> dict[str, dict[str, TestOutcome]]:
    """The project's suites and the person's checks without the run's tests (gate.stripped), then, with them put
    back, every check; what the re-run wrote or left is judged after each stage.

    A suite a person's check runs as it stands takes its outcome from that
    check's run on the state the suite runs on (gate.side_lines.shared), and
    what that run leaves in /tmp counts as the suite's (never excused as the
    person's scratch). /tmp is listed again only where something ran since
    (gate.side_lines.TmpListings); the last listing follows every check.
    """
    token = gate_token()
    lines, tmp = Lines(box, plan.timeout_s, plan.mounts, token), TmpListings(box)
    baseline = _start_processes(box)
    person = [c for c in plan.checks if c.source == "person"]
    others = [c for c in plan.checks if c.source != "person"]
    shared = shared_suites(plan.suites, person)
    first = [c for c in person if c in shared.values()]
    stash = folder.parent / f"{folder.name}.stash"  # beside the mounted copy, never in it
    moved = strip(folder, stash, plan.strip, plan.snapshot) if plan.strip else []
    start = manifest(folder)  # all a check writes in the workspace is judged (it may run code the run wrote)
    seen: dict[str, dict[str, TestOutcome]] = {}
    try:
        for s in plan.suites:
            if s.command not in shared:
                seen[s.command] = lines.suite(s)
                tmp.ran()
        for c in first:  # a shared suite's run, on the suites' state (bare or not): what it leaves is the suite's
            code, output = lines.check(c.command)
            tmp.ran()
            if not plan.strip:  # nothing was taken out: this is the check's own run too
                _record(c, code, output)
            c.after_bare_exit = _exit(code)
            seen.update({s: as_suite(_suite_of(plan, s), code, output) for s, sc in shared.items() if sc is c})
        suites_left = set(tmp.now() or []) if person else set()
        for c in [c for c in person if c not in first] if plan.strip else []:
            code, _ = lines.check(c.command)
            tmp.ran()
            c.after_bare_exit = _exit(code)
        ran = bool(first or len(seen) or (plan.strip and len(person) > len(first)))
        staged = manifest(folder) if ran else start  # nothing ran: nothing was written
        out.effects = real_changes(diff(start, staged).changed)
    finally:
        if moved:
            put_back(folder, stash, moved)
    start = manifest(folder) if moved else staged
    for c in person if plan.strip else [c for c in person if c not in first]:  # their /tmp leftovers: their doing
        code, output = lines.check(c.command)
        tmp.ran()
        _record(c, code, output)
        if not plan.strip:
            c.after_bare_exit = c.after_exit
    theirs = set(tmp.now() or []) - suites_left if person else set()
    for c in others:
        code, output = lines.check(c.command)
        tmp.ran()
        _record(c, code, output)
    out.effects += [e for e in real_changes(diff(start, manifest(folder)).changed) if e not in out.effects]
    left = tmp.now()
    out.effects += (["/tmp and /dev/shm (could not be listed)"] if left is None
                    else [p for p in left if not gate_file(p, token) and p not in theirs])
    now = list_processes(box, baseline)
    if now is None or baseline is None:
        out.left = ["the processes after the gate's re-run could not be listed"]
    else:
        out.left = [f"after the gate's re-run: {p.describe()}" for p in left_running(now, baseline)]
    return seen


def _suite_of(plan: Plan, command: str) -> Suite:
    return next(s for s in plan.suites if s.command == command)


def _before(plan: Plan, box: Sandbox, folder: Path) -> tuple[dict[str, dict[str, TestOutcome]], dict[int, int]]:
    """The project's suites and every check on the pre-run copy, in stages; the checks' exit codes by index (the
    after side runs at the same time, so which checks pass now is not known yet). A suite a person's check runs as
    it stands takes its outcome from that check's run on the bare copy (where nothing is laid over it first)."""
    lines = Lines(box, plan.timeout_s, plan.mounts, gate_token())
    person = [c for c in plan.checks if c.source == "person"]
    shared = shared_suites(plan.suites, person) if plan.strip or not plan.tests_overlay else {}
    seen = {s.command: lines.suite(s) for s in plan.suites if s.command not in shared}
    codes: dict[int, int] = {}

    def bare_run(c: CheckRun, code: int, output: str) -> None:
        seen.update({s: as_suite(_suite_of(plan, s), code, output) for s, sc in shared.items() if sc is c})

    for i, c in enumerate(plan.checks):  # the bare pre-run copy: what the person's proof is judged against
        if c.source == "person" and plan.strip:
            codes[-1 - i], output = lines.check(c.command)
            bare_run(c, codes[-1 - i], output)
    lay(folder, plan.workspace, plan.tests_overlay)
    for i, c in enumerate(plan.checks):
        if c.source == "person":
            codes[i], output = lines.check(c.command)
            codes.setdefault(-1 - i, codes[i])
            if not plan.strip:  # nothing was laid over it (else nothing is shared): still the bare copy
                bare_run(c, codes[i], output)
    lay(folder, plan.workspace, plan.own_overlay)
    for i, c in enumerate(plan.checks):
        if c.source != "person":
            codes[i], _ = lines.check(c.command)
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
