"""A regular expression compiled on first use, so `tether guard` starts without paying for
patterns most commands never reach (interpreter-code and substitution patterns)."""

from __future__ import annotations

import re

from tether.common.rxcache import static

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from typing import Any


class Lazy:
    """`re.compile` deferred until the first search/match/finditer."""

    __slots__ = ("_args", "_rx")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._rx: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        if self._rx is None:
            with static():  # one of the program's own patterns: the hook's cache may keep it
                self._rx = re.compile(*self._args)
        return getattr(self._rx, name)
