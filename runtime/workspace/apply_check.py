"""What `tether apply` must show and have confirmed before it brings a shadow run's changes over.

Parts: `host_code()` (the paths of a plan that would run on the person's
machine once in their folder) and `run_status()` (how the run ended).

The check is made again, on the very versions the apply would write (the
copy's end against the folder's start), not read from the run's record:
whatever the run left there, and whatever its own after-run check said,
apply judges what it brings. A file the apply makes executable is told
too (a script that could not run before can now), and one it makes
writable by every user.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

from tether.common.hostexec_check import Tree, host_exec_changes
from tether.common.manifest import FileState
from tether.common.walk import shown
from tether.runtime.workspace.host_code import read_host_code
from tether.runtime.workspace.merge import Plan
from tether.runtime.workspace.versions import Version

EXEC = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH


def _state(v: Version, tag: str) -> FileState:
    # Only "differs" matters here: every path of the plan changes by definition.
    return FileState(sha256=f"{tag}:{v.sha256 or ''}", size=v.size or 0, mode=v.mode, link=v.target)


def host_code(p: Plan, run_folder: Path, copy: Path, snapshot_files: Path, *, mount: str = "") -> list[str]:
    """One line per step of `p` that would put code that runs on the host into the folder (sorted)."""
    start: dict[str, FileState] = {}
    end: dict[str, FileState] = {}
    modes: dict[str, str] = {}
    for step in p.steps:
        rel, target, now = step.item.rel, step.item.target.version, step.now
        if now is not None:
            start[rel] = _state(now, "now")
        if target is not None:
            end[rel] = _state(target, "end")
        if target is None or target.type != "file":
            continue
        was = now.mode if now is not None and now.type == "file" else 0
        what = (["made executable"] if target.mode & EXEC and not was & EXEC else []) + (
            ["made writable by every user"] if target.mode & stat.S_IWOTH and not was & stat.S_IWOTH else [])
        if what:
            modes[rel] = f"{shown(rel)}: {' and '.join(what)} (mode {target.mode:o})"
    found = host_exec_changes(start, end, Tree(snapshot_files if snapshot_files.is_dir() else None), Tree(copy),
                              mount=mount, host_root=str(p.workspace))
    lines = [c.line() for c in found]
    lines += [line for rel, line in modes.items() if shown(rel) not in {c.path for c in found}]
    doc, why = read_host_code(run_folder)
    if why:
        lines.append(why)
    elif doc is not None and doc.get("error"):
        lines.append(f"the run's own check: {doc['error']}")
    return sorted(set(lines))


def run_status(runs_dir: Path, run_id: str) -> tuple[str, str]:
    """The run's status from its run.json, and, when that cannot be read, why (status `unknown`)."""
    path = runs_dir / run_id / "run.json"
    try:
        meta = json.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return "unknown", f"{path} is missing, so how the run ended is not known"
    except (OSError, ValueError) as e:
        return "unknown", f"{path} is unreadable ({(str(e).splitlines() or [type(e).__name__])[0]})"
    status = meta.get("status") if isinstance(meta, dict) else None
    if not isinstance(status, str) or not status:
        return "unknown", f"{path} is unreadable (no status in it)"
    return status, ""
