"""Moved to the leaf package: event types in common.events, the writer in common.journal.

Kept as a re-export so code written against the old path still imports.
"""

from common.events import *  # noqa: F403
from common.events import Event, ExecFinished, RunEnded, RunStarted, read_events  # noqa: F401
from common.journal import SYNC_KINDS, Journal  # noqa: F401
