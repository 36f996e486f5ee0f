"""The one exception tree of Tether.

It lives in the lowest layer (sandbox) so that guardian, memory, graphs and
runtime can all share it without importing upwards. Each class also inherits
the builtin it resembles, so callers may catch either.
"""


class TetherError(Exception):
    """Root of every error Tether raises on purpose; the message names the fix."""


class ConfigError(TetherError, ValueError):
    """Configuration or user input is invalid."""


class SandboxError(TetherError, RuntimeError):
    """The sandbox could not be created or used."""


class EngineUnavailableError(SandboxError, ConnectionError):
    """The Docker engine cannot be reached."""


class ImageMissingError(SandboxError, LookupError):
    """The sandbox image is not present locally and cannot be pulled."""


class CommandTimeoutError(SandboxError, TimeoutError):
    """A sandboxed command ran past its timeout and was killed."""
