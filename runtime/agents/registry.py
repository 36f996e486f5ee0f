"""Agent name -> its hook adapter module, imported when used (one per agent's protocol)."""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # not typing's: the hook's client path imports this module and typing costs more than it
if TYPE_CHECKING:
    from tether.runtime.agents.base import Adapter

MODULES: dict[str, str] = {
    "claude-code": "tether.runtime.agents.claude_code",
    "codex": "tether.runtime.agents.codex",
    "gemini": "tether.runtime.agents.gemini",
    "cursor": "tether.runtime.agents.cursor",
    "opencode": "tether.runtime.agents.opencode",
}
NAMES: tuple[str, ...] = tuple(MODULES)


def get(name: str) -> Adapter:
    """The adapter of agent `name` (KeyError naming the known agents if there is none)."""
    if name not in MODULES:
        msg = f"no hook adapter for agent {name!r}; known agents: {', '.join(NAMES)}"
        raise KeyError(msg)
    module: Adapter = importlib.import_module(MODULES[name])  # type: ignore[assignment]
    return module
