"""Workspace snapshots taken before a run, and the rollback that restores them.

Parts: `snapshot` (copy the workspace into `<run dir>/snapshot/`, with a
manifest of modes, symlinks and empty folders), `restore` (put the workspace
back byte for byte), `approved_kinds` (what a run approved) and `rollback_run`
(restore, then demote those kinds in the trust ledger).

Files are cloned with copy-on-write reflinks (FICLONE) where the filesystem
supports them (btrfs, XFS, bcachefs, ZFS 2.2+): near-free in time and space.
Elsewhere they are plainly copied, which costs one full copy of the
workspace per run. Hardlinks are never used: a file edited in place would
change the snapshot with it.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from common.errors import TetherError
from runtime.config import TetherConfig
from runtime.trust import APPROVALS_FILE, LedgerCorruptError, TrustLedger
from runtime.workspace import WorkspaceDiff

FICLONE = 0x40049409  # _IOW(0x94, 9, int) from linux/fs.h
SNAPSHOT_DIR = "snapshot"
MANIFEST = "manifest.json"
JOURNAL_FILE = "journal.jsonl"
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class SnapshotError(TetherError, OSError):
    """The workspace could not be snapshotted or restored."""


class UnknownRunError(TetherError, LookupError):
    """No such run, or the run has no snapshot."""


class Entry(BaseModel):
    """One workspace entry as it was before the run."""

    type: Literal["file", "dir", "symlink"]
    mode: int
    """Permission bits (`stat.S_IMODE`)."""
    target: str | None = None
    """Link target, for symlinks."""
    mtime_ns: int | None = None
    """Modification time, restored for files so build tools see no change."""


class SnapshotManifest(BaseModel):
    """`<run dir>/snapshot/manifest.json`: where the workspace is and what it held."""

    workspace: Path
    created_at: datetime
    method: Literal["reflink", "copy"]
    """How file contents were stored."""
    entries: dict[str, Entry] = Field(default_factory=dict)
    """Relative POSIX path -> entry; folders included so empty ones come back."""
    root_mode: int = 0o755
    """Permission bits of the workspace folder itself."""
    skipped: list[str] = Field(default_factory=list)
    """Sockets, FIFOs and devices, which are not restored."""


class RestoreResult(BaseModel):
    """What a restore changed in the workspace, as paths relative to it."""

    workspace: Path
    diff: WorkspaceDiff
    """Seen from the run: `added` were removed, `modified` put back, `deleted` recreated
    (folders end in `/`)."""


def run_dir(runs_dir: Path, run_id: str) -> Path:
    """The run's folder; the id must be a plain name so it cannot escape `runs_dir`."""
    if not _RUN_ID.match(run_id):
        msg = f"invalid run id {run_id!r}; use the id `tether run` printed (letters, digits, . _ -)"
        raise UnknownRunError(msg)
    return runs_dir / run_id


def _clone(src: Path, dst: Path, try_reflink: bool) -> bool:
    """Copy one file's bytes; return whether a reflink was used."""
    with src.open("rb") as fin, dst.open("wb") as fout:
        if try_reflink:
            try:
                fcntl.ioctl(fout.fileno(), FICLONE, fin.fileno())
                return True
            except OSError:
                pass  # not supported here: fall back to a byte copy below
        shutil.copyfileobj(fin, fout, 1 << 20)
    return False


def _raise(e: OSError) -> None:
    raise e  # os.walk would otherwise skip unreadable folders, and restore delete them


def snapshot(workspace: Path, dest_run_dir: Path) -> SnapshotManifest:
    """Copy `workspace` (everything, `.git` included) into `dest_run_dir/snapshot/`."""
    workspace = workspace.resolve()
    if dest_run_dir.resolve().is_relative_to(workspace):
        msg = f"run folder {dest_run_dir} is inside the workspace {workspace}; set TETHER_HOME outside it"
        raise SnapshotError(msg)
    root = dest_run_dir / SNAPSHOT_DIR
    files = root / "files"
    if root.exists():
        shutil.rmtree(root)
    files.mkdir(parents=True)
    man = SnapshotManifest(workspace=workspace, created_at=datetime.now(UTC), method="copy",
                           root_mode=stat.S_IMODE(workspace.stat().st_mode))
    reflink = True
    try:
        for dirpath, dirnames, filenames in os.walk(workspace, onerror=_raise):
            base = Path(dirpath)
            for name in sorted([*dirnames, *filenames]):
                path = base / name
                rel = path.relative_to(workspace).as_posix()
                st = path.lstat()
                mode = stat.S_IMODE(st.st_mode)
                if stat.S_ISLNK(st.st_mode):
                    man.entries[rel] = Entry(type="symlink", mode=mode, target=os.readlink(path))
                elif stat.S_ISDIR(st.st_mode):
                    man.entries[rel] = Entry(type="dir", mode=mode)
                    (files / rel).mkdir()
                elif stat.S_ISREG(st.st_mode):
                    reflink = _clone(path, files / rel, reflink)
                    man.method = "reflink" if reflink else "copy"
                    man.entries[rel] = Entry(type="file", mode=mode, mtime_ns=st.st_mtime_ns)
                else:
                    man.skipped.append(rel)
    except OSError as e:
        msg = f"cannot snapshot {workspace}: {e}; make the workspace readable or run without rollback"
        raise SnapshotError(msg) from e
    (root / MANIFEST).write_text(man.model_dump_json(indent=1), encoding="utf-8")
    return man


def load_manifest(runs_dir: Path, run_id: str) -> SnapshotManifest:
    """The run's snapshot manifest, or UnknownRunError naming the fix."""
    path = run_dir(runs_dir, run_id) / SNAPSHOT_DIR / MANIFEST
    if not path.is_file():
        msg = f"no snapshot for run {run_id!r} under {runs_dir}; list runs with `ls {runs_dir}`"
        raise UnknownRunError(msg)
    return SnapshotManifest.model_validate_json(path.read_text(encoding="utf-8"))


def _kind_of(st: os.stat_result) -> str:
    if stat.S_ISLNK(st.st_mode):
        return "symlink"
    return "dir" if stat.S_ISDIR(st.st_mode) else "file" if stat.S_ISREG(st.st_mode) else "other"


def _same_file(a: Path, b: Path) -> bool:
    if a.stat().st_size != b.stat().st_size or not os.access(b, os.R_OK):
        return False
    with a.open("rb") as fa, b.open("rb") as fb:
        while True:
            ca, cb = fa.read(1 << 20), fb.read(1 << 20)
            if ca != cb:
                return False
            if not ca:
                return True


def _label(rel: str, is_dir: bool) -> str:
    return rel + "/" if is_dir else rel


def _remove(path: Path, rel: str) -> list[str]:
    """Delete a file, link or whole tree; return the labels of everything removed."""
    if path.is_symlink() or not path.is_dir():
        path.unlink()
        return [rel]
    gone = [_label(rel, True)]
    for dirpath, dirnames, filenames in os.walk(path):
        os.chmod(dirpath, 0o700)  # read-only folders would block removal
        base = Path(dirpath).relative_to(path.parent)
        gone += [_label((base / n).as_posix(), n in dirnames and not (Path(dirpath) / n).is_symlink())
                 for n in [*dirnames, *filenames]]
    shutil.rmtree(path)
    return gone


def restore(runs_dir: Path, run_id: str) -> RestoreResult:
    """Put the run's workspace back as the snapshot holds it: contents, modes, symlinks.

    Entries the run added are removed, deleted ones recreated, changed ones
    rewritten; unchanged files are left alone. Never follows a symlink the
    run may have planted: wrong-typed entries are replaced before writing below them.
    """
    man = load_manifest(runs_dir, run_id)
    files = run_dir(runs_dir, run_id) / SNAPSHOT_DIR / "files"
    ws = man.workspace
    added, modified, deleted = set(), set(), set()
    try:
        if ws.is_symlink() or (ws.exists() and not ws.is_dir()):
            ws.unlink()
        ws.mkdir(parents=True, exist_ok=True)
        os.chmod(ws, stat.S_IMODE(ws.stat().st_mode) | 0o700)
        for dirpath, dirnames, filenames in os.walk(ws, onerror=_raise):  # top-down: drop what does not belong
            base = Path(dirpath)
            keep = []
            for name in [*dirnames, *filenames]:
                path = base / name
                rel = path.relative_to(ws).as_posix()
                st = path.lstat()
                entry = man.entries.get(rel)
                if entry is None or entry.type != _kind_of(st):
                    gone = _remove(path, rel)
                    if entry is None:
                        added.update(gone)
                    else:
                        modified.add(_label(rel, entry.type == "dir"))
                        added.update(gone[1:])
                elif entry.type == "dir":
                    os.chmod(path, stat.S_IMODE(st.st_mode) | 0o700)
                    keep.append(name)
            dirnames[:] = [d for d in dirnames if d in keep]
        for rel, entry in sorted(man.entries.items()):
            path, src = ws / rel, files / rel
            exists = path.is_symlink() or path.exists()
            if entry.type == "dir":
                if not exists:
                    path.mkdir(mode=0o700)
                    deleted.add(rel + "/")
            elif entry.type == "symlink":
                if exists and os.readlink(path) == entry.target:
                    continue
                if exists:
                    path.unlink()
                os.symlink(entry.target or "", path)
                (modified if exists else deleted).add(rel)
            else:
                if exists and stat.S_IMODE(path.lstat().st_mode) == entry.mode and _same_file(src, path):
                    continue
                if exists:
                    path.unlink()
                _clone(src, path, True)
                os.chmod(path, entry.mode)
                os.utime(path, ns=(entry.mtime_ns or 0, entry.mtime_ns or 0))
                (modified if exists else deleted).add(rel)
        for rel, entry in sorted(man.entries.items(), reverse=True):  # deepest first
            if entry.type == "dir":
                os.chmod(ws / rel, entry.mode)
        os.chmod(ws, man.root_mode)
    except OSError as e:
        msg = f"restore of run {run_id} into {ws} failed: {e}; fix permissions and rerun `tether rollback {run_id}`"
        raise SnapshotError(msg) from e
    deleted -= modified
    return RestoreResult(workspace=ws, diff=WorkspaceDiff(
        added=sorted(added), modified=sorted(modified), deleted=sorted(deleted)))


def _json_lines(file: Path) -> list[dict]:
    """JSON objects of a log, skipping lines that are not (a crash may cut the last one)."""
    rows = []
    lines = file.read_text(encoding="utf-8", errors="replace").splitlines() if file.is_file() else []
    for line in lines:
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def approved_kinds(path: Path) -> list[str]:
    """Kinds approved (by a person or automatically) in the run at `path`.

    Sources, all optional: `approvals.jsonl` rows `{"kind": K, "approved": true}`
    (written by `TrustLedger.record`); in `journal.jsonl`, events
    `{"type": "approval", "kinds": [...], "approved": true}`, events
    `{"kind": "approval", "cmd_id": C, "approved": true}` joined with the
    `{"kind": "verdict", "cmd_id": C, "kinds": [...]}` of the same command, and
    verdict events the trust ledger turned from ask into allow (`enforced`;
    not in shadow runs, which enforce nothing).
    """
    kinds = {r["kind"] for r in _json_lines(path / APPROVALS_FILE)
             if r.get("approved") is True and isinstance(r.get("kind"), str)}
    events = _json_lines(path / JOURNAL_FILE)
    verdicts = {e.get("cmd_id"): e.get("kinds") for e in events if e.get("kind") == "verdict"}
    shadow = any(e.get("kind") == "run_start" and e.get("shadow") is True for e in events)
    for e in events:
        found: object = None
        if e.get("type") == "approval" and e.get("approved") is True:
            found = e.get("kinds")
        elif e.get("kind") == "approval" and e.get("approved") is True:
            found = verdicts.get(e.get("cmd_id"))
        elif (not shadow and e.get("kind") == "verdict" and e.get("decision") == "ask"
              and e.get("enforced") == "allow"):
            found = e.get("kinds")
        if isinstance(found, list):
            kinds.update(k for k in found if isinstance(k, str))
    return sorted(kinds)


class RollbackResult(BaseModel):
    """A restored workspace and the kinds demoted because of it."""

    run_id: str
    restore: RestoreResult
    demoted: list[str] = Field(default_factory=list)
    ledger_error: str | None = None
    """Set when the ledger is corrupt: the workspace is restored but nothing was demoted."""


def rollback_run(config: TetherConfig, run_id: str) -> RollbackResult:
    """Restore the run's workspace, then demote every kind the run approved."""
    result = RollbackResult(run_id=run_id, restore=restore(config.runs_dir, run_id))
    kinds = approved_kinds(run_dir(config.runs_dir, run_id))
    try:
        ledger = TrustLedger.load(config.ledger_path, config.trust, runs_dir=config.runs_dir)
        for kind in kinds:
            ledger.demote(kind, f"run {run_id} rolled back", run_id=run_id)
    except LedgerCorruptError as e:
        result.ledger_error = str(e)
        return result
    result.demoted = kinds
    return result
