"""Errors of the memory package, rooted in common.errors.

Parts: `MemoryStoreError` (the markdown corpus cannot be read or written),
`UnknownMemoryItemError` (an id names no lesson, rule or run),
`IndexUnavailableError` (the derived index cannot be opened or is corrupt),
`IndexBusyError` (another process holds the index engine; never a reason to rebuild),
`DenseUnavailableError` (dense embeddings asked for but the extra is absent).
"""

from tether.common.errors import ConfigError, StateFileError, TetherError


class MemoryStoreError(StateFileError):
    """A memory file is unreadable, malformed or cannot be written."""


class UnknownMemoryItemError(TetherError, LookupError):
    """No lesson, rule or run has this id; `tether memory list` shows the ids."""


class IndexUnavailableError(TetherError, RuntimeError):
    """The derived index is missing, corrupt or unreachable; it can be rebuilt from markdown."""


class DenseUnavailableError(ConfigError, ImportError):
    """memory.dense = true but the optional embedding package is not installed."""


class IndexBusyError(MemoryStoreError):
    """Another process holds the index engine open past the wait; nothing is rebuilt or lost."""
