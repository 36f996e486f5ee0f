"""Making a folder what a run's snapshot holds, byte for byte.

`restore` brings back contents, modes, symlinks, FIFOs, empty folders, names
with any bytes, at any depth. Everything goes by file descriptor
(common.walk): a symlink a run planted is replaced, never written through.
A shadow run's throw-away copy is made with it (`into`); `tether rollback`
does not use it (it undoes only the run's own changes: runtime.workspace.merge).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tether.common.limits import WorkspaceLimits
from tether.common.manifest import WorkspaceDiff
from tether.common.snapshot import (
    SNAPSHOT_DIR,
    Entry,
    RestoreResult,
    SnapshotError,
    clone_fd,
    from_text,
    load_manifest,
)
from tether.common.walk import (
    DIR_FLAGS,
    Deadline,
    Folders,
    WalkError,
    data_segments,
    open_regular,
    open_root,
    read_link,
    read_segments,
    remove_entry,
    shown,
    walk,
)


def _kind(st: os.stat_result) -> str:
    if stat.S_ISFIFO(st.st_mode):
        return "fifo"
    if stat.S_ISLNK(st.st_mode):
        return "symlink"
    return "dir" if stat.S_ISDIR(st.st_mode) else "file" if stat.S_ISREG(st.st_mode) else "other"


def _lstat(name: str, parent: int) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _same(a: int, b: int, size: int, deadline: Deadline) -> bool:
    """Same data at the same offsets (holes compared as holes, never read)."""
    if list(data_segments(a, size)) != list(data_segments(b, size)):
        return False
    return all(x == y for x, y in zip(read_segments(a, size, size, deadline),
                                      read_segments(b, size, size, deadline), strict=True))


class _Restore:
    def __init__(self, root: int, files: int, entries: dict[str, Entry], skipped: set[str], deadline: Deadline,
                 max_depth: int) -> None:
        self.root, self.files, self.entries, self.skipped = root, files, entries, skipped
        self.deadline, self.max_depth = deadline, max_depth
        self.added: set[str] = set()
        self.modified: set[str] = set()
        self.deleted: set[str] = set()

    def drop_strangers(self) -> None:
        """Remove what the snapshot does not hold, or holds as another type (top-down)."""
        for e in walk(self.root, max_depth=self.max_depth, deadline=self.deadline, what="restore"):
            if e.rel in self.skipped:
                continue
            want = self.entries.get(e.rel)
            kind = _kind(e.st)
            if want is None or want.type != kind:
                prefix = e.rel[: len(e.rel) - len(e.name)]
                gone = [prefix + g for g in remove_entry(e.parent, e.name, self.deadline)]
                if want is None:
                    self.added.update(gone)
                else:
                    self.modified.add(e.rel + "/" if want.type == "dir" else e.rel)
                    self.added.update(gone[1:])
            elif kind == "dir" and e.fd is not None:
                os.fchmod(e.fd, stat.S_IMODE(e.st.st_mode) | 0o700)

    def put_back(self) -> None:
        """Create or rewrite every entry of the snapshot (parents first)."""
        with Folders(self.root) as dst, Folders(self.files) as src:
            for rel, entry in self.entries.items():
                self.deadline.check()
                parent, name = dst.parent(rel), rel.rpartition("/")[2]
                st = _lstat(name, parent)
                if entry.type == "dir":
                    if st is None:
                        os.mkdir(name, 0o700, dir_fd=parent)
                        self.deleted.add(rel + "/")
                elif entry.type == "fifo":
                    if st is None:
                        os.mkfifo(name, 0o600, dir_fd=parent)
                        os.chmod(name, entry.mode, dir_fd=parent, follow_symlinks=False)
                        self.deleted.add(rel)
                elif entry.type == "symlink":
                    self._link(parent, name, rel, from_text(entry.target or ""), st)
                else:
                    self._file(parent, name, rel, entry, st, src.parent(rel))

    def _link(self, parent: int, name: str, rel: str, target: str, st: os.stat_result | None) -> None:
        if st is not None and read_link(parent, name) == target:
            return
        if st is not None:
            os.unlink(name, dir_fd=parent)
        os.symlink(os.fsencode(target), os.fsencode(name), dir_fd=parent)
        (self.modified if st is not None else self.deleted).add(rel)

    def _file(self, parent: int, name: str, rel: str, entry: Entry, st: os.stat_result | None, src_dir: int) -> None:
        got = open_regular(src_dir, name)
        if got is None:
            msg = f"snapshot copy of {rel!r} is missing; the snapshot is damaged"
            raise SnapshotError(msg)
        src, sst = got
        try:
            if st is not None and stat.S_IMODE(st.st_mode) == entry.mode and st.st_size == sst.st_size:
                cur = open_regular(parent, name)
                if cur is not None:
                    try:
                        if _same(src, cur[0], sst.st_size, self.deadline):
                            return
                    finally:
                        os.close(cur[0])
            if st is not None:
                os.unlink(name, dir_fd=parent)
            out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                          dir_fd=parent)
            try:
                clone_fd(src, out, sst.st_size, True, self.deadline)
                os.fchmod(out, entry.mode)
                os.utime(out, ns=(entry.mtime_ns or 0, entry.mtime_ns or 0))
            finally:
                os.close(out)
        finally:
            os.close(src)
        (self.modified if st is not None else self.deleted).add(rel)

    def folder_modes(self) -> None:
        """Set each folder's mode, deepest first (a read-only folder last)."""
        with Folders(self.root) as dst:
            for rel, entry in reversed(self.entries.items()):
                if entry.type == "dir":
                    fd = os.open(rel.rpartition("/")[2], DIR_FLAGS, dir_fd=dst.parent(rel))
                    try:
                        os.fchmod(fd, entry.mode)
                    finally:
                        os.close(fd)


def restore(run_folder: Path, limits: WorkspaceLimits | None = None, *, into: Path | None = None) -> RestoreResult:
    """Make a folder exactly what the snapshot holds: contents, modes, symlinks, FIFOs.

    By default that folder is the run's workspace: every difference goes,
    whoever made it (`tether rollback` undoes only the run's own changes,
    runtime.workspace.merge). With `into`, a new folder becomes a copy of the
    snapshot (a shadow run's throw-away workspace). Entries not in the
    snapshot are removed, missing ones recreated, changed ones rewritten;
    unchanged files are left alone. Sockets and devices the snapshot skipped
    are left as they are.
    """
    limits = limits or WorkspaceLimits()
    man = load_manifest(run_folder)
    files = run_folder / SNAPSHOT_DIR / "files"
    run_id = run_folder.name
    ws = into or man.workspace
    try:
        if ws.is_symlink() or (ws.exists() and not ws.is_dir()):
            ws.unlink()
        ws.mkdir(parents=True, exist_ok=True)
        root, src = open_root(ws), open_root(files)
        try:
            os.fchmod(root, stat.S_IMODE(os.fstat(root).st_mode) | 0o700)
            job = _Restore(root, src, {from_text(k): v for k, v in man.entries.items()},
                           {from_text(k) for k in man.skipped}, Deadline(limits.host_pass_seconds, "restore"),
                           limits.max_depth)
            job.drop_strangers()
            job.put_back()
            job.folder_modes()
            os.fchmod(root, man.root_mode)
        finally:
            os.close(root)
            os.close(src)
    except (OSError, WalkError) as e:
        msg = f"restore of run {run_id} into {ws} failed: {e}; fix permissions and try again"
        raise SnapshotError(msg) from e
    deleted = job.deleted - job.modified
    return RestoreResult(workspace=ws, diff=WorkspaceDiff(
        added=sorted(shown(p) for p in job.added), modified=sorted(shown(p) for p in job.modified),
        deleted=sorted(shown(p) for p in deleted)))
