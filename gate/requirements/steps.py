"""Is the plan done? R01 plan, R02 terminal steps, R03 done steps end on exit 0, R16 budgets, R17 lessons recorded."""

from __future__ import annotations

from tether.gate.evidence import Evidence
from tether.gate.registry import Result, requirement


@requirement("R01", "a plan exists: non-empty, acyclic DAG")
def r01(ev: Evidence) -> Result:
    if ev.plan and ev.plan_valid:
        return "pass", f"{len(ev.plan)} steps, acyclic, dependencies known"
    return "fail", "no valid plan was accepted"


@requirement("R02", "every step reached a terminal state")
def r02(ev: Evidence) -> Result:
    bad = [f"{s.id}={s.status}" for s in ev.steps if s.status not in ("done", "skipped", "blocked")]
    bad += [
        f"{s.id}={s.status} without reason" for s in ev.steps if s.status in ("skipped", "blocked") and not s.reason
    ]
    ran = {c.id for c in ev.executed}
    bad += [
        f"{s.id} done without running a command" for s in ev.steps if s.status == "done" and not ran & set(s.commands)
    ]
    if not ev.steps:
        return "fail", "no steps"
    return ("fail", "not terminal: " + ", ".join(bad)) if bad else ("pass", f"{len(ev.steps)} steps terminal")


@requirement("R03", "no done step whose last command failed")
def r03(ev: Evidence) -> Result:
    by_id = {c.id: c for c in ev.commands}
    bad = []
    for s in ev.steps:
        ran = [by_id[i] for i in s.commands if i in by_id and by_id[i].executed and not by_id[i].unknown]
        if s.status == "done" and ran and ran[-1].exit_code != 0:
            bad.append(f"{s.id} (last: `{ran[-1].command}` exit {ran[-1].exit_code})")
    done = [s for s in ev.steps if s.status == "done"]
    if not done:
        return "n/a", "no step is done"
    return (
        ("fail", "done with failing last command: " + ", ".join(bad))
        if bad
        else ("pass", f"{len(done)} done steps end on exit 0")
    )


@requirement("R16", "within budgets (steps, time, tokens)")
def r16(ev: Evidence) -> Result:
    b, lim = ev.budgets, ev.budgets.limits
    over = []
    if b.steps_used > lim.max_steps:
        over.append(f"steps {b.steps_used}/{lim.max_steps}")
    if b.seconds_used > lim.max_seconds:
        over.append(f"time {b.seconds_used:.0f}s/{lim.max_seconds:.0f}s")
    if b.tokens_used > lim.max_tokens:
        over.append(f"tokens {b.tokens_used}/{lim.max_tokens}")
    if b.max_commands_in_a_step > lim.max_commands_per_step:
        over.append(f"commands in a step {b.max_commands_in_a_step}/{lim.max_commands_per_step}")
    used = (
        f"steps {b.steps_used}/{lim.max_steps}, {b.seconds_used:.1f}s/{lim.max_seconds:.0f}s, tokens "
        f"{b.tokens_used}/{lim.max_tokens}"
    )
    return ("fail", "over budget: " + ", ".join(over)) if over else ("pass", used)


@requirement("R17", "every lesson used was recorded for revision")
def r17(ev: Evidence) -> Result:
    if not ev.lessons_used:
        return "n/a", "no lessons used"
    missing = sorted(set(ev.lessons_used) - set(ev.lessons_recorded))
    return (
        ("fail", "not recorded: " + ", ".join(missing))
        if missing
        else ("pass", f"{len(ev.lessons_used)} lessons recorded")
    )
