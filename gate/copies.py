"""The scratch folders the gate re-runs its checks in: the pre-run copy and the after copy.

Parts: `build_before()` (the pre-run snapshot, copied by descriptor),
`lay()` (files of the final workspace laid over a copy, replacing whatever
stands in their way), `build_after()` (a copy of the final workspace, so the
after side runs in a fresh sandbox and never in the run's own container) and
`remove()`. Both copies live in the run folder and are removed after the gate.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from tether.common.limits import WorkspaceLimits
from tether.common.snapshot import (
    SNAPSHOT_DIR,
    SnapshotError,
    SnapshotManifest,
    clone_fd,
    from_text,
    snapshot,
)
from tether.common.walk import (
    DIR_FLAGS,
    Folders,
    open_regular,
    open_root,
    read_rel,
    remove_entry,
    remove_path,
)

BEFORE_DIR = "gate-before"
AFTER_DIR = "gate-after"
LAY_CAP = 262_144
"""The most bytes of one file laid over the pre-run copy."""


def build_before(run_dir: Path, workspace: Path, overlay: list[str]) -> Path:
    """A scratch copy of the pre-run snapshot, with the run's test files laid over it.

    Built by descriptor, like a rollback: any depth works, and an overlay
    file whose folder was a link in the snapshot replaces the link instead
    of being written through it onto the host. FIFOs, sockets and devices
    are left out (a check must not hang on one).
    """
    snap = run_dir / SNAPSHOT_DIR
    man = SnapshotManifest.model_validate_json((snap / "manifest.json").read_text(encoding="utf-8"))
    dest = run_dir / BEFORE_DIR
    if dest.exists():
        remove_path(dest)  # by descriptor: shutil.rmtree fails on trees ~1000 deep
    dest.mkdir(mode=0o755)
    root, files = open_root(dest), open_root(snap / "files")
    try:
        _copy_snapshot(man, root, files)
        for rel in overlay:
            data = read_rel(workspace, rel, LAY_CAP)
            if data is not None:
                _lay_one(root, rel, data)
    finally:
        os.close(root)
        os.close(files)
    return dest


def _copy_snapshot(man: SnapshotManifest, root: int, files: int) -> None:
    reflink = True
    with Folders(root) as dst, Folders(files) as src:
        for key, entry in man.entries.items():  # walk order: parents first
            rel = from_text(key)
            parent, name = dst.parent(rel), rel.rpartition("/")[2]
            if entry.type == "dir":
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o755, dir_fd=parent)
            elif entry.type == "symlink":
                os.symlink(os.fsencode(from_text(entry.target or "")), os.fsencode(name), dir_fd=parent)
            elif entry.type == "file":
                got = open_regular(src.parent(rel), name)
                if got is None:
                    msg = f"snapshot copy of {rel!r} is missing; the snapshot is damaged"
                    raise SnapshotError(msg)
                try:
                    out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                                  entry.mode | 0o600, dir_fd=parent)
                    try:
                        reflink, _ = clone_fd(got[0], out, got[1].st_size, reflink)
                    finally:
                        os.close(out)
                finally:
                    os.close(got[0])


def _lay_one(root: int, rel: str, data: bytes) -> None:
    """Write `rel` below `root`; whatever stands in its way (a link, a file, a folder) is replaced."""
    fd = os.dup(root)
    try:
        *folders, name = rel.split("/")
        for part in folders:
            try:
                if not stat.S_ISDIR(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode):
                    os.unlink(part, dir_fd=fd)
                    os.mkdir(part, 0o755, dir_fd=fd)
            except FileNotFoundError:
                os.mkdir(part, 0o755, dir_fd=fd)
            sub = os.open(part, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = sub
        remove_entry(fd, name)
        out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=fd)
        try:
            os.write(out, data)
        finally:
            os.close(out)
    finally:
        os.close(fd)




def lay(dest: Path, workspace: Path, rels: list[str]) -> None:
    """Lay the final workspace's version of each of `rels` over the copy at `dest` (a missing one is left out)."""
    root = open_root(dest)
    try:
        for rel in rels:
            data = read_rel(workspace, rel, LAY_CAP)
            if data is not None:
                _lay_one(root, rel, data)
    finally:
        os.close(root)


def build_after(run_dir: Path, workspace: Path, limits: WorkspaceLimits | None = None) -> Path:
    """A copy of the final workspace (a snapshot of it, `.git` included), for the after side's fresh sandbox."""
    base = run_dir / AFTER_DIR
    if base.exists():
        remove_path(base)
    keep = (limits or WorkspaceLimits()).model_copy(update={"snapshot_keep": 0})
    snapshot(workspace, base, keep)
    return base / SNAPSHOT_DIR / "files"


def remove(run_dir: Path) -> None:
    """Remove both scratch copies (by descriptor: shutil.rmtree recurses and fails on deep trees)."""
    for name in (BEFORE_DIR, AFTER_DIR):
        with contextlib.suppress(OSError):
            remove_path(run_dir / name)
