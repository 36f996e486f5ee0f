"""Tether: an agent runtime with guarded execution and a memory that learns without rotting.

The repository keeps the design card's folders at its top level (`runtime/`,
`graphs/`, `guardian/`, `memory/`, `sandbox/`, with `common/` and `gate/`);
the installed distribution maps each of them under this one namespace
(`tether.runtime`, `tether.guardian`, ...; see docs/architecture.md).

Public API for other tools:
    guard(command, cwd=None) -> Verdict: the guardian's verdict on one command.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: `tether hook AGENT` imports this package on every call, typing costs more
if TYPE_CHECKING:
    from typing import Any

    from tether.guardian.verdict import Verdict


def __getattr__(name: str) -> Any:
    """`__version__`, read from the installed metadata on first use (importlib.metadata is slow to import)."""
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("tether")
        except PackageNotFoundError:  # a source tree that is not installed
            return "0+unknown"
    msg = f"module 'tether' has no attribute {name!r}"
    raise AttributeError(msg)


def guard(command: str, cwd: str | None = None, **kwargs: Any) -> Verdict:
    """The guardian's verdict on one bash command line (see tether.guardian.api)."""
    from tether.guardian.api import guard as _guard

    return _guard(command, cwd, **kwargs)


__all__ = ["__version__", "guard"]
