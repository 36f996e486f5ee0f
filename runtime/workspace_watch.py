"""The runner's view of one run's workspace: its manifest before, around each command, and at the gate.

Parts: `WorkspaceWatch` (the per-command scans, sharing one stat-keyed hash
cache, the changed names as journal-safe text, and the size-limit message
the model sees), and `save_start`/`load_start` (the manifest taken before
the run, kept in the run folder so a resumed run diffs against the same one).

Every pass is bounded by `workspace.host_pass_seconds`; past it a WalkError
(a TetherError) stops the run as `failed` with the reason.
"""

from __future__ import annotations

import json
from pathlib import Path

from common.atomic import write_atomic
from common.walk import shown
from runtime.workspace import FileState, ManifestCache, Scan, diff, scan
from sandbox.config import WorkspaceLimits

START_MANIFEST = "start_manifest.json"


class WorkspaceWatch:
    """Scans of one workspace during a run, re-hashing only what changed since the last one."""

    def __init__(self, workspace: Path, limits: WorkspaceLimits) -> None:
        self.workspace, self.limits = workspace, limits
        self.cache = ManifestCache()

    def snapshot(self) -> Scan:
        """The workspace now (manifest and size)."""
        return scan(self.workspace, self.limits, self.cache, what="per-command workspace scan")

    def changed(self, before: Scan, after: Scan) -> list[str]:
        """Names that differ between two scans, as text safe for the journal."""
        return [shown(p) for p in diff(before.states, after.states).changed]

    def over_limit(self, after: Scan) -> str | None:
        """The message the model sees when the workspace outgrew `workspace.max_*bytes`."""
        return after.over_limit(self.limits)

    def final(self) -> dict[str, FileState]:
        """The manifest the gate diffs: a full walk (it reuses hashes only by unchanged stat)."""
        return scan(self.workspace, self.limits, self.cache, what="gate's workspace manifest").states


def save_start(run_dir: Path, workspace: Path, limits: WorkspaceLimits) -> dict[str, FileState]:
    """Scan the workspace before the run and keep the manifest in the run folder.

    Names are stored with Python's JSON escapes, so undecodable bytes
    (surrogate escapes) survive the round trip.
    """
    states = scan(workspace, limits, what="start manifest").states
    data = json.dumps({k: v.model_dump() for k, v in states.items()})
    write_atomic(run_dir / START_MANIFEST, data)
    return states


def load_start(run_dir: Path) -> dict[str, FileState]:
    """The manifest `save_start` kept."""
    raw = json.loads((run_dir / START_MANIFEST).read_text(encoding="ascii"))
    return {k: FileState.model_validate(v) for k, v in raw.items()}
