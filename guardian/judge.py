"""One fail-closed check in plain data, without pydantic (the `tether guard` hook path).

Parts:
    judge: command + Where (+ Limits) -> decision.Result. Any exception,
        parse failure, unsupported construct, too-deep nesting or a blown
        time budget is a `deny` with rule GUARD-FAIL; no path turns an error
        into `allow`. A blown budget is the moment's (a loaded machine), so
        it is `volatile`: never cached. `checker.check` wraps it with the
        cache and the pydantic Verdict.
"""

from __future__ import annotations

from tether.guardian.analyse import Analyser, BudgetError, Deadline
from tether.guardian.decision import LIMITS, Limits, Result, Where
from tether.guardian.rules import get
from tether.guardian.unreadable import PARSE_ERRORS, bash_accepts, judge_parts


def fail(command: str, cause: str, volatile: bool = False) -> Result:
    """The GUARD-FAIL deny for `command`, naming the cause (`volatile`: a moment's, never cached)."""
    hit = get("GUARD-FAIL").plain(detail=cause)
    return Result("deny", [hit], f"GUARD-FAIL: {hit.reason}", [command], volatile)


def judge(command: str, where: Where, limits: Limits = LIMITS, analyser_type: type[Analyser] = Analyser) -> Result:
    """Judge one bash command line (`where` and `limits` may be the pydantic forms too).

    `analyser_type` is a subclass of Analyser that records what it sees (`explain`).
    """
    if not isinstance(command, str):
        return fail(repr(command), f"command is {type(command).__name__}, not str")
    deadline = Deadline(limits)
    try:
        analyser = analyser_type(where, limits, deadline)  # type: ignore[arg-type]
        analyser.run(command, 0)
        result = analyser.result(command)
    except PARSE_ERRORS as e:
        cause = f"{type(e).__name__}: {e}"[:300]
        if not bash_accepts(command):
            return fail(command, cause)
        try:
            analyser = analyser_type(where, limits, deadline)  # type: ignore[arg-type]
            judge_parts(analyser, command, cause)
            result = analyser.result(command)
        except Exception as e2:  # fail closed
            return fail(command, f"{type(e2).__name__}: {e2}"[:300], isinstance(e2, BudgetError))
    except Exception as e:  # fail closed: every failure is a deny, with its cause
        return fail(command, f"{type(e).__name__}: {e}"[:300], isinstance(e, BudgetError))
    if deadline.passed():
        return fail(command, deadline.cause(), volatile=True)
    return result
