"""Which hook entries in an agent's settings are Tether's: only those `tether hook install` wrote.

`install` records the entries it adds (their JSON values) in `hooks-installed.json`; an entry
counts as Tether's only when it is equal to a recorded one, so a hand-made entry that happens to
run `tether hook AGENT` (a look-alike, a shadow entry typed by hand) is never "installed" and is
never removed by `uninstall`. `disabled` reads the settings that turn all of an agent's hooks off.

Parts: `own_entries`, `installed_commands`, `hand_made`, `disabled`.
"""

from __future__ import annotations

import json
from typing import Any

from tether.runtime.agents import registry


def _ours(agent: str, command: object) -> bool:
    return isinstance(command, str) and f"hook {agent}" in command and "tether" in command


def _groups(data: Any, event: str) -> list[Any]:
    hooks = data.get("hooks") if isinstance(data, dict) else None
    groups = hooks.get(event) if isinstance(hooks, dict) else None
    return groups if isinstance(groups, list) else []


def _inner(group: Any) -> list[Any]:
    return group["hooks"] if isinstance(group, dict) and isinstance(group.get("hooks"), list) else [group]


def _recorded(record: dict[str, Any] | None, agent: str) -> list[tuple[str, Any]]:
    """The (event, entry) pairs Tether wrote into a file, from its install record."""
    if not record or record.get("agent") != agent or not isinstance(record.get("entries"), list):
        return []
    return [(e[0], e[1]) for e in record["entries"] if isinstance(e, list) and len(e) == 2 and isinstance(e[0], str)]


def own_entries(agent: str, data: Any, record: dict[str, Any] | None) -> list[tuple[str, Any]]:
    """The entries in parsed settings that Tether wrote: equal to an entry its install record holds."""
    found = []
    for event, entry in _recorded(record, agent):
        if any(g == entry for g in _groups(data, event)):
            found.append((event, entry))
    return found


def shared_groups(agent: str, data: Any, record: dict[str, Any] | None) -> list[tuple[str, Any, list[Any]]]:
    """Groups Tether wrote that the person has since added hooks of their own to: (event, the group as it is now,
    Tether's inner hooks in it). The group matches a recorded one in every key but `hooks`, and still holds each
    inner hook Tether wrote, unchanged."""
    found = []
    for event, entry in _recorded(record, agent):
        if not (isinstance(entry, dict) and isinstance(entry.get("hooks"), list)):
            continue
        for group in _groups(data, event):
            if group == entry or not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            same = {k: v for k, v in group.items() if k != "hooks"} == {k: v for k, v in entry.items() if k != "hooks"}
            if same and entry["hooks"] and all(h in group["hooks"] for h in entry["hooks"]):
                found.append((event, group, list(entry["hooks"])))
    return found


def installed_commands(agent: str, data: Any, record: dict[str, Any] | None = None) -> list[str]:
    """The commands of the hook entries Tether wrote, also inside a group the person added a hook to (a
    hand-made entry that runs `tether hook` does not count)."""
    inner = [h for _, entry in own_entries(agent, data, record) for h in _inner(entry)]
    inner += [h for _, _, hooks in shared_groups(agent, data, record) for h in hooks]
    return [h["command"] for h in inner if isinstance(h, dict) and isinstance(h.get("command"), str)]


def hand_made(agent: str, data: Any, record: dict[str, Any] | None = None) -> list[str]:
    """Commands that run `tether hook AGENT` in entries Tether did not write (the person's own)."""
    own = [entry for _, entry in own_entries(agent, data, record)]
    shared = {id(group): hooks for _, group, hooks in shared_groups(agent, data, record)}
    out: list[str] = []
    for event, _ in registry.get(agent).hook_entries(""):  # type: ignore[attr-defined]
        for group in _groups(data, event):
            if group in own:
                continue
            mine = shared.get(id(group), [])
            out += [h["command"] for h in _inner(group)
                    if isinstance(h, dict) and h not in mine and _ours(agent, h.get("command"))]
    return list(dict.fromkeys(out))


def disabled(agent: str, data: Any) -> str:
    """Why the agent runs no hooks from this file ('' when nothing there turns them off)."""
    for key, value in getattr(registry.get(agent), "DISABLE", {}).items():
        if isinstance(data, dict) and data.get(key) == value:
            return f"{key} = {json.dumps(value)}: {registry.get(agent).TITLE} runs no hooks at all"  # type: ignore[attr-defined]
    off = getattr(registry.get(agent), "disabled_by", None)
    return off(data) if off is not None and isinstance(data, dict) else ""
