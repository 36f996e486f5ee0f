"""The guardian's entry point: check one command, fail closed, cache verdicts.

Parts:
    check: command + context (+ config) -> Verdict. Any exception, parse
        failure, unsupported construct, too-deep nesting or a blown time
        budget is a `deny` with rule GUARD-FAIL; no path turns an error into
        `allow`.
    clear_cache: forget cached verdicts (tests, config changes).
"""

from __future__ import annotations

import time
from collections import OrderedDict

from guardian.analyse import Analyser
from guardian.config import GuardianConfig
from guardian.rules import get
from guardian.verdict import CheckContext, Verdict

_CACHE: OrderedDict[tuple[object, ...], Verdict] = OrderedDict()
_CACHE_SIZE = 4096
_DEFAULT = GuardianConfig()


def _fail(command: str, cause: str) -> Verdict:
    rule = get("GUARD-FAIL")
    hit = rule.hit(detail=cause)
    return Verdict(decision="deny", hits=[hit], reason=f"GUARD-FAIL: {hit.reason}",
                   decoded=[command])


def _analyse(command: str, context: CheckContext, config: GuardianConfig) -> Verdict:
    start = time.perf_counter()
    deadline = start + config.time_budget_ms / 1000.0
    try:
        analyser = Analyser(context, config, deadline)
        analyser.run(command, 0)
        verdict = analyser.verdict(command)
    except Exception as e:  # fail closed: every failure is a deny, with its cause
        return _fail(command, f"{type(e).__name__}: {e}"[:300])
    if time.perf_counter() > deadline:
        return _fail(command, f"time budget of {config.time_budget_ms} ms exceeded")
    return verdict


def check(command: str, context: CheckContext, config: GuardianConfig | None = None) -> Verdict:
    """Judge one bash command line before it runs.

    Args:
        command: the command text, exactly as it would be given to `bash -c`.
        context: workspace, working directory and home used to resolve paths.
        config: analysis limits; defaults to `GuardianConfig()`.

    Returns:
        The verdict: `allow`, `ask` or `deny`, the rules that fired, a reason
        and every decoded form analysed. Never raises for any command text.
    """
    config = config or _DEFAULT
    key = (command, str(context.workspace), str(context.working_dir), str(context.home),
           config.time_budget_ms, config.max_depth, config.min_write_depth)
    cached = _CACHE.get(key)
    if cached is not None:
        _CACHE.move_to_end(key)
        return cached.model_copy(deep=True)
    if not isinstance(command, str):
        return _fail(repr(command), f"command is {type(command).__name__}, not str")
    verdict = _analyse(command, context, config)
    _CACHE[key] = verdict
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return verdict.model_copy(deep=True)


def clear_cache() -> None:
    """Forget every cached verdict."""
    _CACHE.clear()
