"""Where the gate's proof that the change works came from: the person, the project, or the run itself.

Parts: `Source`, `SOURCES` (how each is named to people) and `proof(ev)`.
The person's checks (`--verify`, `[run] verify`) weigh most, then the
project's tests that existed before the run, then checks the run wrote
itself; a person's check that flips only through tests the run wrote
(a generic `unittest discover` running a new test module) is the run's
proof, not the person's. A run whose only proof is its own checks ends `self-verified`
(graphs.build), not `success`, unless the person accepts that.
"""

from __future__ import annotations

from typing import Literal

from tether.gate.checks import COUNTING
from tether.gate.evidence import CheckRun, Evidence
from tether.gate.hollow_tests import hollow, is_written_test

Source = Literal["person", "project", "run", "none"]
SOURCES: dict[str, str] = {
    "person": "the person's checks",
    "project": "the project's own tests (they existed before the run)",
    "run": "checks the run wrote itself",
    "none": "nothing",
}


def _eligible(c: CheckRun) -> bool:
    return c.after_exit is not None and (not c.authored or c.exercises_change)


def tests_written(ev: Evidence) -> tuple[int | None, list[str]]:
    """How many of the tests the run wrote (Python, shell) can fail (None: it wrote none the gate can read), and why the
    others cannot (gate.hollow_tests)."""
    texts = {r: t for r, t in ev.changed_texts.items() if r in ev.diff_added or r in ev.diff_modified}
    if not any(is_written_test(r) for r in texts):
        return None, []
    return hollow(texts)


def proof(ev: Evidence) -> tuple[Source, str]:
    """The strongest proof that the change works, and what it is; ("none", "") when nothing shows it.

    A fail-to-pass check or test shows a change; for a goal that must keep
    behaviour (a refactor), the person's checks or the project's tests
    passing before and after show it.
    """
    if not ev.before_ran:
        return "none", ""
    person = [c for c in ev.checks if c.source == "person" and c.after_exit is not None]
    if f2p := [c for c in person if c.person_fail_to_pass]:  # without the tests the run wrote, on both sides
        return "person", f"`{f2p[0].command}` fails on the pre-run copy and passes now"
    if ev.tests_goal and person and all(c.passed_after for c in person) and (run := [c for c in person if c.authored]):
        if tests_written(ev)[0] != 0:
            return "person", f"the goal asks for tests, and `{run[0].command}` runs the tests the run wrote and passes"
    if ev.tests_goal and tests_written(ev)[0] == 0:
        return "none", ""  # every test the run wrote passes on any code: no check of it shows anything
    if tests := [t for t in ev.project if t.fail_to_pass and t.related]:
        return "project", (f"{len(tests)} of the project's tests fail on the pre-run copy and pass now, "
                           f"e.g. {tests[0].id}")
    if ev.preserving and not ev.refactor_gaps:  # unchanged tests prove a refactor only if the diff is one
        if person and all(c.person_kept for c in person):
            return "person", f"the goal keeps behaviour and `{person[0].command}` passes before and after"
        kept = [t for t in ev.project if t.before == "pass"]
        if kept and not any(t.broken for t in kept):
            return "project", f"the goal keeps behaviour and {len(kept)} of the project's tests pass before and after"
    own = [c for c in ev.checks if c.source != "person" and c.kind in COUNTING and _eligible(c) and c.fail_to_pass]
    flipped = [t for t in ev.project if t.fail_to_pass]
    if flipped and not any(t.related for t in flipped):
        # the run's check runs only files the run left alone (the project's tests), and the tests that flipped in
        # them are not the goal's: its green is theirs, no proof (rt18c D10, D304)
        own = [c for c in own if c.authored]
    if own:
        return "run", f"`{own[0].command}` fails on the pre-run copy and passes now"
    if lent := [c for c in person if c.fail_to_pass and _eligible(c)]:  # the person's check, flipped by the run's tests
        return "run", (f"`{lent[0].command}` fails on the pre-run copy and passes now only through tests the run "
                       "wrote (without them it does not fail before or does not pass now)")
    return "none", ""
