"""`tether hook install | uninstall | status` on an agent's own settings file, edited in place.

Install adds the adapter's hook entries (`hook_entries`) as text
(`jsonsplice`): every other byte of the file stays as the person wrote it.
The inserted snippets are recorded in Tether's home (`hooks-installed.json`),
so uninstall removes exactly them and gives the original bytes back; when a
snippet is no longer there (the person reformatted the file), uninstall falls
back to removing every entry whose command runs `tether hook AGENT` and
writes the JSON with two-space indent. Every write first copies the file to
`hook-backups/` under Tether's home; `dry_run` only returns the change.

Parts: `Change` (what install/uninstall did or would do), `settings_path`,
`default_command`, `install`, `uninstall`, `installed_commands`, `status`.
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.common.atomic import write_atomic
from tether.common.errors import ConfigError
from tether.runtime.agents import jsonsplice, registry

STATE = "hooks-installed.json"
MAX_SETTINGS = 4 << 20


@dataclass
class Change:
    """The outcome of install or uninstall on one settings file."""

    agent: str
    path: Path
    action: str
    """installed, already-installed, uninstalled, not-installed."""
    before: str | None
    after: str | None
    backup: Path | None = None
    dry_run: bool = False

    def diff(self) -> str:
        """A unified diff of the file before and after."""
        a = (self.before or "").splitlines(keepends=True)
        b = (self.after or "").splitlines(keepends=True)
        return "".join(difflib.unified_diff(a, b, f"{self.path} (before)", f"{self.path} (after)"))


def settings_path(agent: str, scope: str, project: Path, user_home: Path) -> Path:
    """The settings file of `agent` for `scope` (ConfigError naming the scopes it has)."""
    spec: dict[str, str] = registry.get(agent).SETTINGS  # type: ignore[attr-defined]
    if scope not in spec:
        msg = f"{agent} has no {scope!r} settings; scopes: {', '.join(spec)}"
        raise ConfigError(msg)
    return (user_home if scope == "user" else project) / spec[scope]


def default_command(agent: str) -> str:
    """The command line the agent runs: this installation's `tether` script (or `python -m tether`)."""
    script = Path(sys.executable).with_name("tether")
    head = shlex.quote(str(script)) if script.is_file() else f"{shlex.quote(sys.executable)} -m tether"
    return f"{head} hook {agent}"


def _read(path: Path) -> str | None:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        msg = f"cannot read {path}: {e.strerror or e}"
        raise ConfigError(msg) from e
    if len(raw) > MAX_SETTINGS:
        msg = f"{path} is over {MAX_SETTINGS} bytes; not editing it"
        raise ConfigError(msg)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        msg = f"{path} is not UTF-8 text; not editing it"
        raise ConfigError(msg) from e


def _scan(path: Path, text: str) -> jsonsplice.Node:
    try:
        root = jsonsplice.scan(text)
    except ValueError as e:
        msg = f"{path} is not plain JSON ({e}); fix it or add the hook by hand (docs/hooks.md)"
        raise ConfigError(msg) from e
    if root.kind != "object":
        msg = f"{path} does not hold a JSON object; not editing it"
        raise ConfigError(msg)
    return root


def _ours(agent: str, command: object) -> bool:
    return isinstance(command, str) and f"hook {agent}" in command and "tether" in command


def installed_commands(agent: str, data: Any) -> list[str]:
    """The commands of `agent`'s hook events in parsed settings that run `tether hook AGENT`."""
    adapter = registry.get(agent)
    found: list[str] = []
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict):
        return found
    for event, _ in adapter.hook_entries(""):  # type: ignore[attr-defined]
        for group in hooks.get(event) or []:
            if not isinstance(group, dict):
                continue
            inner = group.get("hooks") if isinstance(group.get("hooks"), list) else [group]
            found += [h["command"] for h in inner if isinstance(h, dict) and _ours(agent, h.get("command"))]
    return found


def _state(tether_home: Path) -> dict[str, Any]:
    try:
        data = json.loads((tether_home / STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_state(tether_home: Path, state: dict[str, Any]) -> None:
    write_atomic(tether_home / STATE, json.dumps(state, indent=2, sort_keys=True) + "\n")


def _backup(tether_home: Path, agent: str, path: Path, text: str) -> Path:
    name = str(path).strip("/").replace("/", "__")
    dest = tether_home / "hook-backups" / agent / f"{time.strftime('%Y%m%d-%H%M%S')}-{time.time_ns() % 10**9}-{name}"
    write_atomic(dest, text)
    return dest


def _write(path: Path, text: str) -> None:
    mode = (path.stat().st_mode & 0o777) if path.exists() else 0o644
    write_atomic(path, text, mode=mode)


def _file_hook(agent: str) -> bool:
    return bool(getattr(registry.get(agent), "FILE_HOOK", False))


def _install_file(agent: str, path: Path, command: str, dry_run: bool) -> Change:
    """An agent whose hook is a file of its own (OpenCode's plugin): write it; never over another file."""
    before = _read(path)
    text = registry.get(agent).plugin(command)  # type: ignore[attr-defined]
    if before is not None:
        if f"tether hook {agent}" in before or before == text:
            return Change(agent, path, "already-installed", before, before, dry_run=dry_run)
        msg = f"{path} exists and is not Tether's plugin; move it aside first"
        raise ConfigError(msg)
    change = Change(agent, path, "installed", None, text, dry_run=dry_run)
    if not dry_run:
        write_atomic(path, text, mode=0o644)
    return change


def install(agent: str, path: Path, tether_home: Path, command: str | None = None,
            dry_run: bool = False) -> Change:
    """Add the hook entries of `agent` to the settings file at `path` (created when missing)."""
    adapter = registry.get(agent)
    command = command or default_command(agent)
    if _file_hook(agent):
        return _install_file(agent, path, command, dry_run)
    before = _read(path)
    text = before if before is not None else adapter.TEMPLATE  # type: ignore[attr-defined]
    _scan(path, text)
    if installed_commands(agent, json.loads(text)):
        return Change(agent, path, "already-installed", before, before, dry_run=dry_run)
    snippets: list[list[Any]] = []
    for event, entry in adapter.hook_entries(command):  # type: ignore[attr-defined]
        root = _scan(path, text)
        hooks = root.get("hooks")
        if hooks is None:
            text, snippet, at = jsonsplice.add_member(text, root, "hooks", {event: [entry]})
        elif hooks.kind != "object":
            msg = f"{path}: 'hooks' is not an object; not editing it"
            raise ConfigError(msg)
        elif hooks.get(event) is None:
            text, snippet, at = jsonsplice.add_member(text, hooks, event, [entry])
        else:
            text, snippet, at = jsonsplice.add_item(text, hooks.get(event), entry)  # type: ignore[arg-type]
        snippets.append([at, snippet])
    change = Change(agent, path, "installed", before, text, dry_run=dry_run)
    if dry_run:
        return change
    if before is not None:
        change.backup = _backup(tether_home, agent, path, before)
    _write(path, text)
    state = _state(tether_home)
    state[str(path)] = {"agent": agent, "snippets": snippets, "created": before is None,
                        "backup": str(change.backup) if change.backup else None}
    _save_state(tether_home, state)
    return change


def _remove_recorded(text: str, record: dict[str, Any]) -> str | None:
    for at, snippet in reversed(record.get("snippets") or []):
        if not isinstance(snippet, str) or not isinstance(at, int):
            return None
        if text[at : at + len(snippet)] != snippet:
            if text.count(snippet) != 1:
                return None
            at = text.index(snippet)
        text = text[:at] + text[at + len(snippet):]
    return text


def _remove_structural(agent: str, data: dict[str, Any]) -> dict[str, Any]:
    hooks = data.get("hooks")
    for event, _ in registry.get(agent).hook_entries(""):  # type: ignore[attr-defined]
        groups = hooks.get(event) if isinstance(hooks, dict) else None
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) and isinstance(group.get("hooks"), list) else None
            if inner is None:
                if not (isinstance(group, dict) and _ours(agent, group.get("command"))):
                    kept.append(group)
                continue
            rest = [h for h in inner if not (isinstance(h, dict) and _ours(agent, h.get("command")))]
            if rest:
                kept.append(group | {"hooks": rest})
        hooks[event] = kept  # type: ignore[index]
    return data


def uninstall(agent: str, path: Path, tether_home: Path, dry_run: bool = False) -> Change:
    """Remove the hook entries of `agent` from the settings file at `path`."""
    before = _read(path)
    if _file_hook(agent):
        if before is None or f"hook {agent}" not in before:
            return Change(agent, path, "not-installed", before, before, dry_run=dry_run)
        change = Change(agent, path, "uninstalled", before, None, dry_run=dry_run)
        if not dry_run:
            change.backup = _backup(tether_home, agent, path, before)
            path.unlink()
        return change
    if before is not None:
        _scan(path, before)
    if before is None or not installed_commands(agent, json.loads(before)):
        return Change(agent, path, "not-installed", before, before, dry_run=dry_run)
    state = _state(tether_home)
    record = state.get(str(path)) if isinstance(state.get(str(path)), dict) else None
    after = _remove_recorded(before, record) if record and record.get("agent") == agent else None
    if after is not None:
        try:
            if installed_commands(agent, json.loads(after)):
                after = None
        except ValueError:
            after = None
    if after is None:
        after = json.dumps(_remove_structural(agent, json.loads(before)), indent=2) + "\n"
    delete = bool(record and record.get("created")) and after == registry.get(agent).TEMPLATE  # type: ignore[attr-defined]
    change = Change(agent, path, "uninstalled", before, None if delete else after, dry_run=dry_run)
    if dry_run:
        return change
    change.backup = _backup(tether_home, agent, path, before)
    if delete:
        path.unlink()
    else:
        _write(path, after)
    state.pop(str(path), None)
    _save_state(tether_home, state)
    return change


def status(agent: str, path: Path) -> dict[str, Any]:
    """Whether `path` holds the hook of `agent`, and with which commands."""
    if _file_hook(agent):
        try:
            text = _read(path)
        except ConfigError as e:
            return {"agent": agent, "path": str(path), "exists": path.exists(), "installed": False, "error": str(e)}
        found = re.search(r"^const COMMAND = (.*);$", text or "", re.MULTILINE)
        commands = [json.loads(found.group(1))] if found and _ours(agent, json.loads(found.group(1))) else []
        return {"agent": agent, "path": str(path), "exists": text is not None, "installed": bool(commands),
                "commands": commands}
    try:
        text = _read(path)
        data = json.loads(text) if text is not None else None
    except (ConfigError, ValueError) as e:
        return {"agent": agent, "path": str(path), "exists": path.exists(), "installed": False, "error": str(e)}
    commands = installed_commands(agent, data)
    return {"agent": agent, "path": str(path), "exists": text is not None, "installed": bool(commands),
            "commands": commands}
