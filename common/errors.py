"""The root of Tether's exception tree and the errors every layer shares.

Parts: `TetherError` (the root), `ConfigError` (bad configuration or user
input), `StateFileError` (a state file that cannot be read, parsed or
written). Each class also inherits the builtin it resembles, so callers may
catch either. Layer-specific errors live with their layer (sandbox.errors,
memory.errors) and derive from these.
"""


class TetherError(Exception):
    """Root of every error Tether raises on purpose; the message names the fix."""


class ConfigError(TetherError, ValueError):
    """Configuration or user input is invalid."""


class StateFileError(TetherError, OSError):
    """A state file is unreadable, malformed or cannot be written; the message names it and the fix."""
