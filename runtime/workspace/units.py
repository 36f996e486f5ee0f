"""Folders a rollback takes as one: a repository (`.git`) used since the run is a conflict as a whole.

Part: `used_since()`.

Undoing a run path by path is safe for files, not for a repository: if the
run committed (new objects, a moved ref) and the person committed on top
since, removing the run's objects leaves the person's commit pointing at
objects that are gone, though no path of the person's was touched. So when
a run changed anything under `.git/`, every entry there must still be what
the run left (or, where the run did not touch it, what it was before the
run); anything else means someone used the repository since, and the
rollback refuses (`--force` overrides; what it overwrites is backed up).
"""

from __future__ import annotations

import os
from pathlib import Path

from tether.common.limits import WorkspaceLimits
from tether.common.snapshot import SNAPSHOT_DIR, from_text, load_manifest
from tether.common.walk import DIR_FLAGS, Deadline, WalkError, open_root, shown, walk
from tether.runtime.workspace.changes import RunChanges, base_version
from tether.runtime.workspace.versions import Located, Version, matches, of_stat

UNITS = (".git",)
LISTED = 3


def used_since(run_dir: Path, changes: RunChanges, workspace: Path, limits: WorkspaceLimits,
               skip: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
    """Entries of a unit the run changed that are no longer as the run left them (at most a few; shown names).

    `skip`: paths a newer run being undone first changed (the merge checks those).
    """
    rels = changes.rels()
    man = load_manifest(run_dir)
    created_ns = int(man.created_at.timestamp() * 1e9)
    base = {from_text(k): v for k, v in man.entries.items()}
    files = run_dir / SNAPSHOT_DIR / "files"
    found: list[str] = []
    deadline = Deadline(limits.host_pass_seconds, "checking the repository")
    for unit in UNITS:
        if not any(r == unit or r.startswith(unit + "/") for r in rels):
            continue
        seen: set[str] = set()
        for rel, now in _entries(workspace, unit, limits, deadline):
            seen.add(rel)
            if rel in skip:
                continue
            if rel in rels:
                want = Located(rels[rel].after, None, rel)
            elif rel in base:
                want = Located(base_version(base[rel], created_ns), files, rel)
            else:
                want = Located(None, None, rel)
            if not matches(Located(now, workspace, rel), want, changes.hash_cap, deadline):
                found.append(shown(rel))
            if len(found) >= LISTED:
                return found
        expected = {r for r in base if r.startswith(unit + "/") and r not in rels}
        expected |= {r for r, c in rels.items() if r.startswith(unit + "/") and c.after is not None}
        found += [shown(r) for r in sorted(expected - seen - skip)][: LISTED - len(found)]
    return found[:LISTED]


def _entries(workspace: Path, unit: str, limits: WorkspaceLimits, deadline: Deadline
             ) -> list[tuple[str, Version]]:
    """Every entry of `workspace/unit` now, by descriptor (nothing when the unit is gone or not a real folder)."""
    root = open_root(workspace)
    try:
        try:
            fd = os.open(unit, DIR_FLAGS, dir_fd=root)
        except OSError:
            return []
        try:
            return [(f"{unit}/{e.rel}", of_stat(e.st, e.parent, e.name))
                    for e in walk(fd, max_depth=limits.max_depth, deadline=deadline, what="checking the repository")]
        except WalkError:
            return [(unit, Version(type="other"))]
        finally:
            os.close(fd)
    finally:
        os.close(root)
