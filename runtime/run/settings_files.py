"""The person's settings files a run could have written: a tether.toml inside its own workspace.

`tether run` reads tether.toml from the working folder; when that folder is
the workspace, the run can write one there while it works, and a later
`tether resume` (or approve/deny) would read it: a weaker gate
(`accept_self_verified`, `host_code = "undo"`), other guardian limits, a
longer timeout. `record()` keeps the hash of each settings file the run
started with; `planted()` names the ones inside the workspace that the run
did not start with, and `resume` refuses on them (one line naming the file).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from tether.common.errors import ConfigError
from tether.runtime.config import config_files

META_KEY = "settings_files"
"""run.json's record: {path of a settings file read at the start: its sha256}."""


def _digest(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""


def record(cwd: Path | None = None) -> dict[str, str]:
    """The settings files this process read, each with its hash (run.json keeps it for resume)."""
    return {str(p.absolute()): _digest(p) for p in config_files(cwd)}


def planted(meta: dict[str, Any], cwd: Path | None = None) -> list[Path]:
    """Settings files read now that lie inside the run's workspace and that the run did not start with (absent
    then, or changed since): the run could have written them."""
    workspace = Path(str(meta.get("workspace", ""))).absolute()
    started: dict[str, str] = meta.get(META_KEY) or {}
    out = []
    for path in config_files(cwd):
        path = path.absolute()
        try:
            path.resolve().relative_to(workspace.resolve())
        except ValueError:
            continue
        if started.get(str(path)) != _digest(path):
            out.append(path)
    return out


def refuse_planted(meta: dict[str, Any], cwd: Path | None = None) -> None:
    """ConfigError naming a settings file the run could have planted (resume would judge by it)."""
    for path in planted(meta, cwd):
        msg = (f"{path} is inside the workspace of run {meta.get('run_id')} and was written or changed after the run "
               "started: a run may not choose the settings it is judged by; check the file and remove it, or "
               "resume from another folder")
        raise ConfigError(msg)
