"""After the sandbox is gone: what the run left in the workspace, and what of it runs on the person's machine.

Parts: `settle(config, meta, run_dir, record)`, run by the runner once the
sandbox is removed and the workspace handed back (nothing in the sandbox
can write any more): a full walk of the workspace, diffed against the
start manifest; the changes to places that run on the host
(common.hostexec_check); caches that do not match their source removed;
with `run.host_code = "undo"` every other such change put back as it was
before the run, then checked; `host_code.json` (the changed files and those
findings) and `changes.diff` (the content diff) written to the run folder.
`apply(record, doc)` turns a `success` that left such code into
`needs-review`, naming each one; `record_from` applies it again whenever a
finished run is reported. Whatever fails here fails closed: the run cannot
be `success` when the check could not be made.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from tether.common.atomic import write_atomic
from tether.common.errors import TetherError
from tether.common.hostexec_check import HostExecChange, Tree, host_exec_changes, review_lines
from tether.common.manifest import FileState, scan
from tether.common.snapshot import SNAPSHOT_DIR, from_text
from tether.runtime.config import TetherConfig
from tether.runtime.hooks.base import RunRecord
from tether.runtime.run.files import work_folder
from tether.runtime.workspace.content_diff import content_diff
from tether.runtime.workspace.host_code import HOST_CODE, read_host_code
from tether.runtime.workspace.putback import put_back, state_now
from tether.runtime.workspace.watch import load_start, start_cache

DIFF = "changes.diff"
FINAL = frozenset({"success", "self-verified", "needs-review", "failed", "blocked"})
log = logging.getLogger(__name__)


def settle(config: TetherConfig, meta: dict[str, Any], run_dir: Path, record: RunRecord) -> RunRecord:
    """Check (and, when configured, undo) what the run left that runs on the host; save the diff; the record."""
    workspace = work_folder(meta)  # a shadow run left its changes in its copy
    try:
        doc = _check(config, workspace, run_dir, final=record.status in FINAL)
    except BaseException as e:  # fail closed, signals included: the run ends, and says it was not checked
        log.warning("after-run check of run %s failed: %s", record.run_id, e)
        doc = {"error": f"the workspace could not be checked for code that runs on your machine: {e}",
               "files": [], "host_exec": [], "review": []}
    try:
        write_atomic(run_dir / HOST_CODE, json.dumps(doc))
    except TetherError as e:
        log.warning("%s", e)
    return apply(record, doc)


def _check(config: TetherConfig, workspace: Path, run_dir: Path, *, final: bool) -> dict[str, Any]:
    start = load_start(run_dir)
    end = _walk(config, workspace, run_dir, start)
    files_root = run_dir / SNAPSHOT_DIR / "files"
    before = Tree(files_root if files_root.is_dir() else None)
    after = Tree(workspace)
    found = host_exec_changes(start, end, before, after, mount=config.sandbox.workspace_mount,
                              host_root=str(workspace))
    if final:
        for change in found:
            if change.kind == "python bytecode" and change.detail != "has no source: Python imports it as is":
                _undo(change, start, workspace, before.root, config, "removed")
            elif config.run.host_code == "undo" and change.review:
                _undo(change, start, workspace, before.root, config, "undone")
        if any(c.status != "left" for c in found):
            end = _walk(config, workspace, run_dir, start)
    files, text = content_diff(start, end, before, after, {c.path for c in found})
    write_atomic(run_dir / DIFF, text)
    return {"error": "", "files": [f.model_dump() for f in files], "host_exec": [c.model_dump() for c in found],
            "review": review_lines(found), "mode": config.run.host_code}


def _walk(config: TetherConfig, workspace: Path, run_dir: Path, start: dict[str, FileState]) -> dict[str, FileState]:
    return scan(workspace, config.workspace, start_cache(run_dir, start), what="after-run workspace check").states


def _undo(change: HostExecChange, start: dict[str, FileState], workspace: Path, snapshot_files: Path | None,
          config: TetherConfig, done: str) -> None:
    """Put one path back (or remove it), then check it really is as before the run."""
    rel = from_text(change.key)
    was = start.get(rel)
    try:
        put_back(workspace, snapshot_files, rel, was)
    except OSError as e:
        log.warning("could not put back %s: %s", change.path, e)
        return
    if state_now(workspace, rel, config.workspace) == was:
        change.status = done  # type: ignore[assignment]


def load_host_code(run_dir: Path) -> dict[str, Any] | None:
    """host_code.json of a run, None when not written yet; unreadable, a record of a check that failed."""
    doc, why = read_host_code(run_dir)
    return {"error": why, "files": [], "host_exec": [], "review": []} if why else doc


def _findings(doc: dict[str, Any]) -> list[HostExecChange]:
    out = []
    for item in doc.get("host_exec") or []:
        try:
            out.append(HostExecChange.model_validate(item))
        except ValueError:
            continue  # a hand-edited host_code.json: what cannot be read is not shown
    return out


def apply(record: RunRecord, doc: dict[str, Any] | None) -> RunRecord:
    """The record with what the after-run check found (`host_code`); never `success` with such code left."""
    if doc is None:
        return record
    review = [str(r) for r in doc.get("review") or []]
    if doc.get("error"):
        review.append(str(doc["error"]))
    done = [c for c in _findings(doc) if c.status != "left"]
    told = [c.line() for c in done[:20]] + ([f"and {len(done) - 20} more put back or removed"] if done[20:] else [])
    update: dict[str, Any] = {"host_code": review + told}
    if record.status in ("success", "self-verified") and review:
        update |= {"status": "needs-review", "reason": "a person must review: " + "; ".join(review[:3])}
    return record.model_copy(update=update)
