"""Errors of the sandbox layer, rooted in common.errors.

Parts: `SandboxError` and its kinds. `TetherError` and `ConfigError` are
re-exported from common.errors (their home) for code written against this path.
"""

from tether.common.errors import ConfigError, TetherError

__all__ = ["CommandTimeoutError", "ConfigError", "EngineLostError", "EngineUnavailableError", "ImageMissingError",
           "SandboxError", "TetherError"]


class SandboxError(TetherError, RuntimeError):
    """The sandbox could not be created or used."""


class EngineUnavailableError(SandboxError, ConnectionError):
    """The Docker engine cannot be reached."""


class EngineLostError(EngineUnavailableError):
    """The Docker engine went away while a sandbox was in use (a command's result is unknown)."""


class ImageMissingError(SandboxError, LookupError):
    """The sandbox image is not present locally and cannot be pulled."""


class CommandTimeoutError(SandboxError, TimeoutError):
    """A sandboxed command ran past its timeout and was killed."""
