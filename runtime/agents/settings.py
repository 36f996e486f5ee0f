"""`tether hook install | uninstall | status` on an agent's own settings file, edited in place.

Install adds the adapter's hook entries (`hook_entries`) as text
(`jsonsplice`): every other byte of the file stays as the person wrote it.
The inserted snippets are recorded in Tether's home (`hooks-installed.json`),
so uninstall removes exactly them and gives the original bytes back; when a
snippet is no longer there (the person reformatted the file), uninstall falls
back to removing the entries equal to the recorded ones (`owned`: only
Tether's entries ever count or go) and writes the JSON with two-space indent.
A file with a duplicate key is refused; a symlinked file is edited at its
target. Every write first copies the file to `hook-backups/` under Tether's
home; `dry_run` only returns the change.

Parts: `Change` (what install/uninstall did or would do), `settings_path`,
`default_command`, `install`, `uninstall`, `status`.
"""

from __future__ import annotations

import difflib
import json
import os
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
from tether.runtime.agents.owned import disabled, hand_made, installed_commands, own_entries, shared_groups

__all__ = ["STATE", "Change", "default_command", "disabled", "hand_made", "install", "installed_commands",
           "own_entries", "settings_path", "status", "uninstall"]

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


def _target(path: Path) -> Path:
    """The file to edit: `path`, or the file a symlink at `path` points to (edited in place; the link stays)."""
    if not path.is_symlink():
        return path
    real = Path(os.path.realpath(path))
    if not real.is_file():
        msg = f"{path} is a symlink to {real}, which is not a regular file; fix the link or edit it by hand"
        raise ConfigError(msg)
    return real


def _read(path: Path) -> str | None:
    path = _target(path)
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
    """Replace the file atomically, or, when it has other hard links (a dotfiles repo), rewrite the same inode so
    every link sees the change: the new bytes are ready first, then written over the old and truncated."""
    path = _target(path)
    st = path.stat() if path.exists() else None
    if st is None or st.st_nlink < 2:
        write_atomic(path, text, mode=(st.st_mode & 0o777) if st else 0o644)
        return
    data = text.encode("utf-8")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW)
        try:
            os.pwrite(fd, data, 0)
            os.ftruncate(fd, len(data))
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as e:
        msg = f"cannot rewrite hard-linked {path} in place: {e.strerror or e}; the backup is under hook-backups"
        raise ConfigError(msg) from e


def _file_hook(agent: str) -> bool:
    return bool(getattr(registry.get(agent), "FILE_HOOK", False))


def _plugin_command(agent: str, text: str | None) -> str | None:
    """The command of Tether's own plugin file: the file must be exactly what `plugin(command)` writes."""
    found = re.search(r"^const COMMAND = (.*);$", text or "", re.MULTILINE)
    try:
        command = json.loads(found.group(1)) if found else None
    except ValueError:
        return None
    ok = isinstance(command, str) and text == registry.get(agent).plugin(command)  # type: ignore[attr-defined]
    return command if ok else None


def _install_file(agent: str, path: Path, command: str, dry_run: bool) -> Change:
    """An agent whose hook is a file of its own (OpenCode's plugin): write it; never over another file."""
    before = _read(path)
    text = registry.get(agent).plugin(command)  # type: ignore[attr-defined]
    if before is not None:
        if _plugin_command(agent, before) is not None:
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
    if installed_commands(agent, json.loads(text), _state(tether_home).get(str(path))):
        return Change(agent, path, "already-installed", before, before, dry_run=dry_run)
    snippets: list[list[Any]] = []
    entries = adapter.hook_entries(command)  # type: ignore[attr-defined]
    for event, entry in entries:
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
                        "entries": [[event, entry] for event, entry in entries],
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


def _remove_structural(agent: str, data: dict[str, Any], record: dict[str, Any] | None) -> dict[str, Any]:
    """The settings without the entries Tether wrote (by value; inside a group the person added a hook to, just
    Tether's inner hooks); every other entry stays."""
    hooks = data.get("hooks")
    for _, group, mine in shared_groups(agent, data, record):
        group["hooks"] = [h for h in group["hooks"] if h not in mine]
    for event, entry in own_entries(agent, data, record):
        groups = hooks.get(event) if isinstance(hooks, dict) else None
        if isinstance(groups, list) and entry in groups:
            groups.remove(entry)
            if not groups:
                del hooks[event]  # type: ignore[union-attr]
    return data


def uninstall(agent: str, path: Path, tether_home: Path, dry_run: bool = False) -> Change:
    """Remove the hook entries Tether wrote into the settings file at `path` (never an entry of the person's)."""
    before = _read(path)
    if _file_hook(agent):
        if _plugin_command(agent, before) is None:
            return Change(agent, path, "not-installed", before, before, dry_run=dry_run)
        change = Change(agent, path, "uninstalled", before, None, dry_run=dry_run)
        if not dry_run:
            change.backup = _backup(tether_home, agent, path, before or "")
            path.unlink()
        return change
    if before is not None:
        _scan(path, before)
    state = _state(tether_home)
    record = state.get(str(path)) if isinstance(state.get(str(path)), dict) else None
    if before is None or not (own_entries(agent, json.loads(before), record)
                              or shared_groups(agent, json.loads(before), record)):
        return Change(agent, path, "not-installed", before, before, dry_run=dry_run)
    after = _remove_recorded(before, record)  # type: ignore[arg-type]
    if after is not None:
        try:
            if own_entries(agent, json.loads(after), record) or hand_made(agent, json.loads(after)) != hand_made(
                    agent, json.loads(before), record):
                after = None
        except ValueError:
            after = None
    if after is None:
        after = json.dumps(_remove_structural(agent, json.loads(before), record), indent=2) + "\n"
    left = installed_commands(agent, json.loads(after), record)
    if left:  # never say "removed" while Tether's entry is still there
        msg = f"could not remove Tether's hook from {path} (still there: {left[0][:120]}); edit it by hand"
        raise ConfigError(msg)
    delete = bool(record and record.get("created")) and after == registry.get(agent).TEMPLATE  # type: ignore[attr-defined]
    change = Change(agent, path, "uninstalled", before, None if delete else after, dry_run=dry_run)
    if dry_run:
        return change
    change.backup = _backup(tether_home, agent, path, before)
    if delete:
        _target(path).unlink()
    else:
        _write(path, after)
    state.pop(str(path), None)
    _save_state(tether_home, state)
    return change


def status(agent: str, path: Path, tether_home: Path | None = None) -> dict[str, Any]:
    """Whether `path` holds the hook Tether wrote for `agent` (its commands), hand-made look-alikes, and whether
    the file turns the agent's hooks off."""
    row: dict[str, Any] = {"agent": agent, "path": str(path), "exists": path.exists(), "installed": False,
                           "commands": [], "hand_made": []}
    try:
        text = _read(path)
        if _file_hook(agent):
            command = _plugin_command(agent, text)
            return row | {"installed": command is not None, "commands": [command] if command else [],
                          "hand_made": [] if command or not text or f"hook {agent}" not in text else [str(path)]}
        data = json.loads(text) if text is not None else None
        if text is not None:
            _scan(path, text)
    except (ConfigError, ValueError) as e:
        return row | {"error": str(e)}
    if tether_home is None:
        from tether.runtime.agents.client import tether_home as default_home

        tether_home = Path(default_home())
    record = _state(tether_home).get(str(path))
    record = record if isinstance(record, dict) else None
    commands = installed_commands(agent, data, record)
    row |= {"installed": bool(commands), "commands": commands, "hand_made": hand_made(agent, data, record)}
    why = disabled(agent, data)
    near = getattr(registry.get(agent), "disabled_near", None)
    why = why or (near(path) if near is not None else "")
    return row | ({"disabled": why} if why else {})
