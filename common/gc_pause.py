"""Pause Python's cyclic garbage collector for one bulk pass (a walk of 200k files, a manifest read back).

Why: such a pass makes hundreds of thousands of objects that all stay
alive; each few hundred allocations start a collection, and the older
generations are scanned again and again as the heap grows, a third of a
second-run's host work at 200k files. Nothing in these passes makes
reference cycles; whatever else did is collected once the pause ends.
Passes may nest and run in threads (an eval's cells): the collector is
turned back on when the last one ends, and only if it was on before.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
_depth = 0
_was_on = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Run the block with the cyclic collector off (reference counting still frees everything it can)."""
    global _depth, _was_on  # noqa: PLW0603 - one process-wide switch, like gc's own
    with _LOCK:
        if _depth == 0:
            _was_on = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _LOCK:
            _depth -= 1
            if _depth == 0 and _was_on:
                gc.enable()
