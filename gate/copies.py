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
    scratch_copy,
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


def build_before(run_dir: Path, workspace: Path, overlay: list[str], name: str = BEFORE_DIR) -> Path:
    """A scratch copy of the pre-run snapshot, with the run's test files laid over it, at `run_dir/name`.

    Built by descriptor, like a rollback: any depth works, and an overlay
    file whose folder was a link in the snapshot replaces the link instead
    of being written through it onto the host. FIFOs, sockets and devices
    are left out (a check must not hang on one).
    """
    snap = run_dir / SNAPSHOT_DIR
    man = SnapshotManifest.model_validate_json((snap / "manifest.json").read_text(encoding="utf-8"))
    dest = run_dir / name
    if dest.exists():
        remove_path(dest)  # by descriptor: shutil.rmtree fails on trees ~1000 deep
    dest.mkdir(mode=0o755)
    root, files = open_root(dest), open_root(snap / "files")
    try:
        _copy_snapshot(man, root, files)
        _set_dir_modes(man, root)
        for rel in overlay:
            data = read_rel(workspace, rel, LAY_CAP)
            if data is not None:
                _lay_one(root, rel, data, _rel_mode(workspace, rel))
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
                    os.mkdir(name, 0o700, dir_fd=parent)
            elif entry.type == "symlink":
                os.symlink(os.fsencode(from_text(entry.target or "")), os.fsencode(name), dir_fd=parent)
            elif entry.type == "file":
                got = open_regular(src.parent(rel), name)
                if got is None:
                    msg = f"snapshot copy of {rel!r} is missing; the snapshot is damaged"
                    raise SnapshotError(msg)
                try:
                    out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                                  0o600, dir_fd=parent)
                    try:
                        reflink, _ = clone_fd(got[0], out, got[1].st_size, reflink)
                        os.fchmod(out, file_mode(entry.mode))
                    finally:
                        os.close(out)
                finally:
                    os.close(got[0])


def file_mode(mode: int) -> int:
    """The mode a copied file keeps: its permission bits, never setuid, setgid or sticky."""
    return stat.S_IMODE(mode) & 0o777


def dir_mode(mode: int) -> int:
    """A copied folder's mode: its bits (sticky too), always open to its owner so the gate can lay and remove."""
    return (stat.S_IMODE(mode) & 0o1777) | 0o700


def _chmod_at(parent: int, name: str, mode: int, flags: int) -> None:
    """chmod through a descriptor opened without following links (a vanished entry is left alone)."""
    try:
        fd = os.open(name, flags | os.O_NOFOLLOW, dir_fd=parent)
    except (FileNotFoundError, NotADirectoryError, OSError):
        return
    try:
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def _set_dir_modes(man: SnapshotManifest, root: int) -> None:
    """Give every copied folder its recorded mode, deepest first (set last, after the files are in place)."""
    keys = [k for k, e in man.entries.items() if e.type == "dir"]
    with Folders(root) as dst:
        for key in reversed(keys):
            rel = from_text(key)
            _chmod_at(dst.parent(rel), rel.rpartition("/")[2], dir_mode(man.entries[key].mode), DIR_FLAGS)
    os.fchmod(root, dir_mode(man.root_mode))


def _rel_mode(workspace: Path, rel: str) -> int:
    """The copied mode of the workspace file at `rel` (walked by descriptor, no link followed); 0o644 if unknown."""
    *folders, name = rel.split("/")
    try:
        fd = open_root(workspace)
    except OSError:
        return 0o644
    try:
        for part in folders:
            sub = os.open(part, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = sub
        return file_mode(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except OSError:
        return 0o644
    finally:
        os.close(fd)


def _lay_one(root: int, rel: str, data: bytes, mode: int = 0o644) -> None:
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
        out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=fd)
        try:
            os.write(out, data)
            os.fchmod(out, mode)
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
                _lay_one(root, rel, data, _rel_mode(workspace, rel))
    finally:
        os.close(root)


def build_after(run_dir: Path, workspace: Path, limits: WorkspaceLimits | None = None) -> Path:
    """A copy of the final workspace (copied as a snapshot is, `.git` included; its manifest kept in memory, never
    written and synced), for the after side's fresh sandbox."""
    base = run_dir / AFTER_DIR
    if base.exists():
        remove_path(base)
    files = base / SNAPSHOT_DIR / "files"
    files.parent.mkdir(parents=True)
    man = scratch_copy(workspace, files, limits)
    root = open_root(files)
    try:
        _restore_kinds(man, root)
        _set_dir_modes(man, root)
    finally:
        os.close(root)
    return files


def _restore_kinds(man: SnapshotManifest, root: int) -> None:
    """Give the snapshot's stored files their modes back and re-create its symlinks as links.

    The snapshot stores every file owner-only and keeps links in its manifest;
    a check that runs `./script` or reads a link must see them as the run left them.
    """
    with Folders(root) as dst:
        for key, entry in man.entries.items():
            rel = from_text(key)
            parent, name = dst.parent(rel), rel.rpartition("/")[2]
            if entry.type == "file":
                _chmod_at(parent, name, file_mode(entry.mode), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            elif entry.type == "symlink":
                with contextlib.suppress(FileExistsError):
                    os.symlink(os.fsencode(from_text(entry.target or "")), os.fsencode(name), dir_fd=parent)


def remove(run_dir: Path) -> None:
    """Remove both scratch copies (by descriptor: shutil.rmtree recurses and fails on deep trees)."""
    for name in (BEFORE_DIR, AFTER_DIR):
        with contextlib.suppress(OSError):
            remove_path(run_dir / name)
