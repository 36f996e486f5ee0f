"""A shadow run's throw-away workspace: a copy of the person's folder, made from the run's snapshot.

Parts: `make_shadow_copy()` and `check_shadow_home()`.

The copy is `<run>/shadow/`, built from the snapshot by descriptor
(runtime.workspace.restore: contents, modes, symlinks as symlinks, FIFOs,
empty folders, any name, any depth), with reflinks where the file system
has them. The sandbox, the watch and the gate see only the copy; the
person's folder is read once, for the snapshot, and never written. At the
end the copy's changes are recorded (runtime.workspace.changes) for `tether
apply`.
"""

from __future__ import annotations

from pathlib import Path

from tether.common.errors import ConfigError
from tether.common.limits import WorkspaceLimits
from tether.common.snapshot import MANIFEST, SHADOW_DIR, SNAPSHOT_DIR, snapshot
from tether.common.walk import remove_path
from tether.runtime.workspace.changes import save_copy_sigs
from tether.runtime.workspace.restore import restore


def check_shadow_home(home: Path, workspace: Path) -> None:
    """Refuse a shadow run whose Tether home (or its runs or locks, through a symlink) lies inside the workspace."""
    workspace = workspace.resolve()
    for place in (home, home / "runs", home / "locks", home / "lent"):
        if place.resolve().is_relative_to(workspace):
            msg = (f"the Tether home's {place} is inside the workspace {workspace}, so a shadow run would change the "
                   "folder it must leave alone; set TETHER_HOME (or --home) to a folder outside it")
            raise ConfigError(msg)


def make_shadow_copy(workspace: Path, run_dir: Path, limits: WorkspaceLimits) -> Path:
    """Snapshot `workspace` (unless done) and make `<run_dir>/shadow/` a copy of it; the copy's path.

    Raises:
        SnapshotError: the workspace could not be snapshotted (the shadow run must not start).
    """
    if not (run_dir / SNAPSHOT_DIR / MANIFEST).is_file():
        snapshot(workspace, run_dir, limits)
    copy = run_dir / SHADOW_DIR
    if copy.exists() or copy.is_symlink():
        remove_path(copy)
    copy.mkdir(mode=0o700)
    restore(run_dir, limits, into=copy)
    save_copy_sigs(run_dir, copy, limits)
    return copy
