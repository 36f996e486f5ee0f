"""The guardian's entry point: check one command, fail closed, cache verdicts.

Parts:
    check: command + context (+ config) -> Verdict, through `judge.judge`:
        any exception, parse failure, unsupported construct, too-deep nesting
        or a blown time budget is a `deny` with rule GUARD-FAIL; no path turns
        an error into `allow`.
    clear_cache: forget cached verdicts (tests, config changes).
"""

from __future__ import annotations

from collections import OrderedDict

from tether.guardian.config import GuardianConfig
from tether.guardian.judge import judge
from tether.guardian.verdict import CheckContext, Verdict

_CACHE: OrderedDict[tuple[object, ...], Verdict] = OrderedDict()
_CACHE_SIZE = 4096
_DEFAULT = GuardianConfig()


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
    key = (command, str(context.workspace), str(context.working_dir), str(context.home), context.sandbox,
           str(context.files),
           config.time_budget_ms, config.max_depth, config.min_write_depth, config.wall_budget_ms)
    cached = _CACHE.get(key)
    if cached is not None:
        _CACHE.move_to_end(key)
        return cached.model_copy(deep=True)
    if not isinstance(command, str):
        return Verdict.of(judge(command, context))
    result = judge(command, context, config)  # type: ignore[arg-type]
    verdict = Verdict.of(result)
    if result.volatile:
        return verdict  # it read a file (a package.json script): the next check reads it again
    _CACHE[key] = verdict
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return verdict.model_copy(deep=True)


def clear_cache() -> None:
    """Forget every cached verdict."""
    _CACHE.clear()
