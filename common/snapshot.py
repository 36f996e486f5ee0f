"""Workspace snapshots taken before a run, so `tether rollback` can put it back.

Parts: `snapshot` (copy the workspace into `<run dir>/snapshot/`, with a
manifest of modes, symlinks, FIFOs and empty folders), `load_manifest`
(`BadSnapshotError` when it is damaged), `gc_snapshots` (keep the newest `workspace.snapshot_keep`, never a live or
paused run's: common.liveness) and the name encoding the manifest uses.
`runtime.workspace.restore` puts a snapshot back; `runtime.workspace.merge`
compares it with a run's end and the folder now (rollback, apply).

The copy walks the workspace by file descriptor (common.walk): no symlink is
followed, no FIFO opened, any depth works, and names keep their exact bytes.
Files are cloned with copy-on-write reflinks (FICLONE) where the filesystem
supports them (btrfs, XFS, bcachefs, ZFS 2.2+): near-free in time and space.
Elsewhere only their data segments are copied, holes kept (a 15 TiB sparse
file costs what it holds), which costs the workspace's allocated size per
run: the free space is checked first, and a failed snapshot is removed.
Hardlinks are never used: a file edited in place would change the snapshot with it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from tether.common.atomic import write_atomic
from tether.common.errors import TetherError
from tether.common.limits import WorkspaceLimits
from tether.common.liveness import pinned
from tether.common.manifest import WorkspaceDiff
from tether.common.walk import (
    Deadline,
    Folders,
    WalkError,
    allocated,
    copy_sparse,
    open_regular,
    open_root,
    read_link,
    remove_path,
    walk,
)

FICLONE = 0x40049409  # _IOW(0x94, 9, int) from linux/fs.h
SNAPSHOT_DIR = "snapshot"
SHADOW_DIR = "shadow"
"""A shadow run's throw-away copy of the workspace, next to its snapshot (pruned with it)."""
MANIFEST = "manifest.json"
JOURNAL_FILE = "journal.jsonl"
RAW = "\x00"
"""Prefix of a name stored as hex because it is not valid UTF-8 (no real name holds a NUL)."""


class SnapshotError(TetherError, OSError):
    """The workspace could not be snapshotted or restored."""


class NoSnapshotError(SnapshotError, LookupError):
    """The run has no snapshot (never taken, or pruned)."""


class BadSnapshotError(SnapshotError, ValueError):
    """The run's snapshot manifest is there but cannot be read (damaged, truncated, not a file)."""


class Entry(BaseModel):
    """One workspace entry as it was before the run."""

    type: Literal["file", "dir", "symlink", "fifo"]
    mode: int
    """Permission bits (`stat.S_IMODE`)."""
    target: str | None = None
    """Link target, for symlinks (encoded like the names: `to_text`)."""
    mtime_ns: int | None = None
    """Modification time, restored for files so build tools see no change."""
    sig: list[int] | None = None
    """Files: (device, inode, size, mtime, ctime) of the workspace's file when it was copied; an equal stat
    later means the same bytes (the kernel sets ctime on every change and nobody can set it back)."""


class SnapshotManifest(BaseModel):
    """`<run dir>/snapshot/manifest.json`: where the workspace is and what it held."""

    workspace: Path
    created_at: datetime
    method: Literal["reflink", "copy"]
    """How file contents were stored."""
    entries: dict[str, Entry] = Field(default_factory=dict)
    """Relative name (`to_text`) -> entry, in walk order (parents first); folders
    included so empty ones come back."""
    root_mode: int = 0o755
    """Permission bits of the workspace folder itself."""
    skipped: list[str] = Field(default_factory=list)
    """Sockets and devices, which are neither copied nor touched by a restore."""
    bytes_copied: int = 0
    """Data bytes written into the snapshot (0 for reflinked files)."""


class RestoreResult(BaseModel):
    """What a restore changed in the workspace, as paths relative to it."""

    workspace: Path
    diff: WorkspaceDiff
    """Seen from the run: `added` were removed, `modified` put back, `deleted` recreated
    (folders end in `/`)."""


def to_text(name: str) -> str:
    """A surrogate-escaped name as JSON-safe text that maps back exactly (`from_text`)."""
    if name.isascii() or not any("\udc80" <= c <= "\udcff" for c in name):
        return name
    return RAW + os.fsencode(name).hex()


def from_text(text: str) -> str:
    """The surrogate-escaped name `to_text` stored."""
    return os.fsdecode(bytes.fromhex(text[len(RAW):])) if text.startswith(RAW) else text


def clone_fd(src: int, dst: int, size: int, try_reflink: bool, deadline: Deadline | None = None) -> tuple[bool, int]:
    """Copy one file's bytes: (whether a reflink was made, data bytes written)."""
    if try_reflink:
        try:
            fcntl.ioctl(dst, FICLONE, src)
            return True, 0
        except OSError:
            pass  # not supported here: copy the data segments below
    return False, copy_sparse(src, dst, size, deadline)


def stat_sig(st: os.stat_result) -> list[int]:
    """What identifies one version of a file without reading it: device, inode, size, mtime, ctime."""
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _needed(workspace: Path, limits: WorkspaceLimits) -> int:
    """Bytes the workspace's files take on disk: what a plain copy needs."""
    deadline = Deadline(limits.host_pass_seconds, "sizing the snapshot")
    return sum(allocated(e.st) for e in walk(workspace, max_depth=limits.max_depth, deadline=deadline)
               if e.kind == "file")


def _check_space(workspace: Path, root: Path, limits: WorkspaceLimits) -> None:
    need = _needed(workspace, limits)
    fs = os.statvfs(root)
    free = fs.f_bavail * fs.f_frsize
    if need + (64 << 20) > free:
        msg = (f"not enough free space for the snapshot of {workspace}: it needs {need / 2**30:.2f} GiB "
               f"(+64 MiB spare), {free / 2**30:.2f} GiB free under {root}; free some space or "
               "lower workspace.snapshot_keep")
        raise SnapshotError(msg)


def snapshot(workspace: Path, dest_run_dir: Path, limits: WorkspaceLimits | None = None) -> SnapshotManifest:
    """Copy `workspace` (everything, `.git` included) into `dest_run_dir/snapshot/`.

    Older snapshots beyond `limits.snapshot_keep` are removed first; a
    snapshot that fails is removed, never left half-made.

    Raises:
        SnapshotError: not enough free space, unreadable, too deep, or past the deadline.
    """
    limits = limits or WorkspaceLimits()
    workspace = workspace.resolve()
    if dest_run_dir.resolve().is_relative_to(workspace):
        msg = f"run folder {dest_run_dir} is inside the workspace {workspace}; set TETHER_HOME outside it"
        raise SnapshotError(msg)
    root = dest_run_dir / SNAPSHOT_DIR
    if root.exists():
        _remove_tree(root)
    dest_run_dir.mkdir(parents=True, exist_ok=True)
    if limits.snapshot_keep:
        gc_snapshots(dest_run_dir.parent, max(limits.snapshot_keep - 1, 0), spare=dest_run_dir.name)
    try:
        _check_space(workspace, dest_run_dir, limits)
        (root / "files").mkdir(parents=True)
        man = _copy(workspace, root / "files", limits)
        write_atomic(root / MANIFEST, man.model_dump_json(indent=1))
    except (OSError, WalkError) as e:
        with contextlib.suppress(OSError):
            _remove_tree(root)
        if isinstance(e, SnapshotError):
            raise
        msg = f"cannot snapshot {workspace}: {e}; make the workspace readable or run without rollback"
        raise SnapshotError(msg) from e
    return man


def scratch_copy(workspace: Path, files: Path, limits: WorkspaceLimits | None = None) -> SnapshotManifest:
    """Copy `workspace` into the new folder `files` as `snapshot()` does, for a copy that lives minutes (the gate's
    after copy): the manifest is returned, not written and synced, and no older snapshot is collected; one that
    fails is removed.

    Raises:
        SnapshotError: not enough free space, unreadable, too deep, or past the deadline.
    """
    limits = limits or WorkspaceLimits()
    try:
        _check_space(workspace, files.parent, limits)
        files.mkdir()
        return _copy(workspace.resolve(), files, limits)
    except (OSError, WalkError) as e:
        with contextlib.suppress(OSError):
            _remove_tree(files)
        if isinstance(e, SnapshotError):
            raise
        msg = f"cannot copy {workspace}: {e}; make the workspace readable"
        raise SnapshotError(msg) from e


def _copy(workspace: Path, files: Path, limits: WorkspaceLimits) -> SnapshotManifest:
    deadline = Deadline(limits.host_pass_seconds, "workspace snapshot")
    src_root = open_root(workspace)
    dst_root = open_root(files)
    try:
        man = SnapshotManifest(workspace=workspace, created_at=datetime.now(UTC), method="copy",
                               root_mode=stat.S_IMODE(os.fstat(src_root).st_mode))
        reflink = True
        with Folders(dst_root) as dst:
            for e in walk(src_root, max_depth=limits.max_depth, deadline=deadline, what="workspace snapshot"):
                mode, key = stat.S_IMODE(e.st.st_mode), to_text(e.rel)
                if e.kind == "dir":
                    os.mkdir(e.name, 0o700, dir_fd=dst.parent(e.rel))
                    man.entries[key] = Entry(type="dir", mode=mode)
                elif e.kind == "symlink":
                    target = read_link(e.parent, e.name)
                    if target is None:
                        continue
                    man.entries[key] = Entry(type="symlink", mode=mode, target=to_text(target))
                elif e.kind == "file":
                    got = open_regular(e.parent, e.name)
                    if got is None:
                        continue  # replaced mid-walk by something that is not a file
                    src, st = got
                    try:
                        out = os.open(e.name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                                      0o600, dir_fd=dst.parent(e.rel))
                        try:
                            reflink, written = clone_fd(src, out, st.st_size, reflink, deadline)
                        finally:
                            os.close(out)
                    finally:
                        os.close(src)
                    man.bytes_copied += written
                    man.method = "reflink" if reflink else "copy"
                    man.entries[key] = Entry(type="file", mode=mode, mtime_ns=st.st_mtime_ns, sig=stat_sig(st))
                elif stat.S_ISFIFO(e.st.st_mode):
                    man.entries[key] = Entry(type="fifo", mode=mode)
                else:
                    man.skipped.append(key)
    finally:
        os.close(src_root)
        os.close(dst_root)
    return man


def _remove_tree(path: Path) -> None:
    """Remove a folder by descriptor (any depth, no link followed)."""
    remove_path(path)


def load_manifest(run_folder: Path) -> SnapshotManifest:
    """The snapshot manifest in a run's folder, or NoSnapshotError naming the fix."""
    path = run_folder / SNAPSHOT_DIR / MANIFEST
    if not os.path.lexists(path):
        msg = (f"no snapshot for run {run_folder.name!r} (never taken, or pruned by "
               "workspace.snapshot_keep); list runs with `tether runs`")
        raise NoSnapshotError(msg)
    try:
        return SnapshotManifest.model_validate_json(path.read_bytes())
    except (OSError, ValueError) as e:
        detail = (str(e).splitlines() or [type(e).__name__])[0]
        msg = (f"{path} is unreadable ({detail}): without it Tether cannot know what run {run_folder.name} "
               "started from, so nothing was changed; restore that file from a backup, or undo the run by hand "
               "(`git status`, `git diff`, `git checkout`)")
        raise BadSnapshotError(msg) from e


def gc_snapshots(runs_dir: Path, keep: int, *, spare: str | None = None) -> list[str]:
    """Remove the snapshots of all but the newest `keep` runs; return the run ids pruned.

    Only `<run>/snapshot/` (and a shadow run's copy, `<run>/shadow/`) go; the
    run's journal and record stay. `spare` names a run whose snapshot is never
    removed (the one being taken); a run that is live or paused for an answer
    (its live marker, common.liveness) is never pruned and does not count
    toward `keep`.
    """
    if not runs_dir.is_dir():
        return []
    found = sorted((p.stat().st_mtime, p.parent.name) for p in runs_dir.glob(f"*/{SNAPSHOT_DIR}")
                   if p.parent.name != spare and not p.is_symlink() and not pinned(p.parent))
    pruned = [name for _, name in found[:max(len(found) - keep, 0)]]
    for name in pruned:
        if pinned(runs_dir / name):  # became live since it was listed
            continue
        _remove_tree(runs_dir / name / SNAPSHOT_DIR)
        if (runs_dir / name / SHADOW_DIR).is_dir():
            _remove_tree(runs_dir / name / SHADOW_DIR)
    return pruned
