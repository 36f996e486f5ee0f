"""Does the work do what the goal asks? R07 and R08 over the checks the gate re-ran itself, before and after the run."""

from __future__ import annotations

from tether.gate.checks import COUNTING
from tether.gate.evidence import CheckRun, Evidence, real_changes
from tether.gate.proof import SOURCES, proof, tests_written
from tether.gate.registry import Result, requirement


def judged(ev: Evidence) -> tuple[list[CheckRun], str]:
    """The checks that decide R07/R08: the person's, or else the run's own real checks."""
    person = [c for c in ev.checks if c.source == "person"]
    if person:
        return person, "the person's checks"
    return [c for c in ev.checks if c.kind in COUNTING], "the run's own checks"


def _changed(ev: Evidence) -> bool:
    return ev.wants_change or bool(real_changes(ev.diff))


def _none(ev: Evidence, what: str) -> Result:
    if not _changed(ev):
        return "n/a", "no change and no check"
    not_checks = [f"`{c.command}`: {c.reason}" for c in ev.checks if c.source != "person"][:3]
    why = f" (not checks: {'; '.join(not_checks)})" if not_checks else ""
    return "fail", f"no real check {what}{why}; give one with `tether run --verify CMD`"


@requirement("R07", "a real check, re-run by the gate, shows the change")
def r07(ev: Evidence) -> Result:
    pool, who = judged(ev)
    if ev.shadowing:
        return (
            "fail",
            f"the run wrote {', '.join(ev.shadowing[:3])}, which replaces what the checks load; "
            "no check can be trusted",
        )
    if not pool and not ev.project:
        return _none(ev, "was planned or given")
    ran = [c for c in pool if c.after_exit is not None]
    if not ran and not ev.project:
        return "fail", "the gate could not re-run any check: " + "; ".join(
            f"`{c.command}` {c.skipped}" for c in pool[:3]
        )
    if not _changed(ev):
        return "pass", f"{len(ran)} of {who} and {len(ev.project)} of the project's tests re-run in a fresh sandbox"
    if not ev.before_ran:
        return (
            "fail",
            f"the checks could not run on the pre-run copy ({ev.before_note}); nothing shows the change works",
        )
    source, detail = proof(ev)
    if source != "none":
        return "pass", f"proof from {SOURCES[source]}: {detail}"
    same = [c.command for c in ran if c.passed_after and c.before_exit == 0]
    lazy = [c.command for c in ran if c.authored and not c.exercises_change]
    erred = [t.id for t in ev.project if t.before == "error" and t.after == "pass" and not t.fail_to_pass]
    unrelated = [t.id for t in ev.project if t.fail_to_pass and not t.related]
    real, hollow = tests_written(ev) if ev.tests_goal else (None, [])
    if real == 0 and hollow:
        detail = "the goal asks for tests, but none the run wrote can fail: " + "; ".join(hollow[:2])
    elif ev.preserving and ev.refactor_gaps:
        detail = "the goal keeps behaviour, but " + "; ".join(ev.refactor_gaps[:2])
    elif unrelated:
        detail = (f"the project's test {unrelated[0]} turned green, but neither its id nor its source names what "
                  "the goal names: it is no proof of the goal")
    elif lazy:
        detail = f"`{lazy[0]}` runs a test the run wrote that names no changed file"
    elif same:
        detail = f"`{same[0]}` passes on the pre-run copy too"
    elif erred:
        detail = f"the project's test {erred[0]} failed before by an error (import, collection, a missing file), " \
                 "not by assertion, or its test file changed"
    else:
        detail = "no check passes now"
    return "fail", f"no check fails before the run and passes after it ({detail}): nothing shows the change works"


@requirement("R08", "every check passes now")
def r08(ev: Evidence) -> Result:
    pool, who = judged(ev)
    if not pool and not ev.project:
        return _none(ev, "to succeed")
    bad = []
    for c in pool:
        if c.after_exit is None:
            if c.source == "person":
                bad.append(f"`{c.command}` was not run ({c.skipped})")
        elif c.empty:
            bad.append(f"`{c.command}` ran no test")
        elif c.after_exit != 0:
            regression = ", though it passed before the run" if c.before_exit == 0 else ""
            bad.append(f"`{c.command}` exits {c.after_exit} now{regression}")
    if broken := [t for t in ev.project if t.broken]:
        names = ", ".join(f"{t.id} ({t.after or 'gone'})" for t in broken[:5])
        bad.insert(0, f"{len(broken)} of the project's tests passed before the run and do not now: {names}")
    if still := [t for t in ev.project if t.still_failing_named]:
        bad.append(f"{len(still)} of the project's tests that name what the goal names fail now and did not pass "
                   "before: " + ", ".join(f"{t.id} ({t.after})" for t in still[:3]))
    if ev.rerun_effects:
        bad.append("the gate's re-run of the checks changed the workspace or left files: "
                   + ", ".join(ev.rerun_effects[:5]))
    if bad:
        return "fail", "; ".join(bad[:3])
    kept = sum(t.before == "pass" for t in ev.project)
    return "pass", f"{len(pool)} of {who} pass now in a fresh sandbox; {kept} of the project's tests still pass"
