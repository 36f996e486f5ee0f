"""What a run changed: every path that differs between its snapshot (the start) and its end.

Parts: `Change` (a path's version before and after), `RunChanges` (saved as
`<run dir>/changes.json` when the run stops), `record_changes()`,
`load_changes()`, `base_version()`, and `save_copy_sigs()` (the stat of a
shadow copy's files when it was made).

Recorded once the sandbox is gone and the workspace handed back, so nothing
writes the tree while it is read. A file is compared with its snapshot copy
only when its stat moved (common.snapshot.Entry.sig): the cost is the run's
changes, not the workspace. Rollback and apply (runtime.workspace.merge) read
this record: they act on these paths and on no other.
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from tether.common.atomic import write_atomic
from tether.common.errors import StateFileError
from tether.common.limits import WorkspaceLimits
from tether.common.manifest import RACY_NS
from tether.common.snapshot import SNAPSHOT_DIR, Entry, from_text, load_manifest, stat_sig, to_text
from tether.common.walk import Deadline, hash_file, open_regular, walk
from tether.runtime.workspace.versions import Located, Version, of_stat, same_bytes

CHANGES_FILE = "changes.json"
COPY_SIGS = "shadow_base.json"
"""Stat signatures of a shadow copy's files right after it was made (before any sandbox saw it)."""


class Change(BaseModel):
    """One path the run changed: its version at the start (None: absent) and at the end."""

    before: Version | None = None
    after: Version | None = None


class RunChanges(BaseModel):
    """`<run dir>/changes.json`: the run's changes, base (its snapshot) to end."""

    run_id: str
    workspace: Path
    """The person's folder."""
    end_root: Path
    """Where the end was read: the workspace, or a shadow run's copy (which keeps the end's bytes)."""
    shadow: bool = False
    started_at: float = 0.0
    """When the run's snapshot was taken (its start): orders the runs of one workspace."""
    recorded_at: float
    hash_cap: int
    """`workspace.hash_max_bytes` when recorded: hashes compare only under the same cap."""
    paths: dict[str, Change] = Field(default_factory=dict)
    """Relative name (common.snapshot.to_text) -> change, parents before children."""

    def rels(self) -> dict[str, Change]:
        """The changes keyed by surrogate-escaped names (their exact bytes with `os.fsencode`)."""
        return {from_text(k): v for k, v in self.paths.items()}


def base_version(entry: Entry, created_ns: int) -> Version:
    """A snapshot entry as a version; its stat proves its bytes when it was last changed 2 s before the snapshot."""
    sig = entry.sig
    proves = sig is not None and max(sig[3], sig[4]) < created_ns - RACY_NS
    return Version(type=entry.type, mode=entry.mode, target=from_text(entry.target) if entry.target else None,
                   size=sig[2] if sig else None, sig=sig, sig_proves=proves, mtime_ns=entry.mtime_ns)


def save_copy_sigs(run_dir: Path, copy: Path, limits: WorkspaceLimits) -> None:
    """Record the stat of every file of a fresh shadow copy (an equal stat at the end means untouched)."""
    deadline = Deadline(limits.host_pass_seconds, "recording the shadow copy")
    sigs = {to_text(e.rel): stat_sig(e.st) for e in walk(copy, max_depth=limits.max_depth, deadline=deadline)
            if e.kind == "file"}
    write_atomic(run_dir / COPY_SIGS, json.dumps(sigs))


def _copy_sigs(run_dir: Path) -> dict[str, list[int]]:
    try:
        data = json.loads((run_dir / COPY_SIGS).read_bytes())
    except (OSError, ValueError):
        return {}
    return {from_text(k): v for k, v in data.items() if isinstance(v, list)} if isinstance(data, dict) else {}


def record_changes(run_dir: Path, end_root: Path, limits: WorkspaceLimits, *, run_id: str, workspace: Path,
                   shadow: bool = False, save: bool = True) -> RunChanges:
    """Compare the tree at `end_root` with the run's snapshot and save what differs (`changes.json`).

    Raises:
        NoSnapshotError: the run has no snapshot.
        WalkError: the tree is deeper than `limits.max_depth` or the pass ran past its deadline.
    """
    man = load_manifest(run_dir)
    created_ns = int(man.created_at.timestamp() * 1e9)
    entries = {from_text(k): v for k, v in man.entries.items()}
    skipped = {from_text(k) for k in man.skipped}
    files = run_dir / SNAPSHOT_DIR / "files"
    copy_sigs = _copy_sigs(run_dir) if shadow else {}
    deadline = Deadline(limits.host_pass_seconds, "recording the run's changes")
    recorded = time.time_ns()
    out = RunChanges(run_id=run_id, workspace=workspace, end_root=end_root, shadow=shadow,
                     started_at=man.created_at.timestamp(), recorded_at=recorded / 1e9, hash_cap=limits.hash_max_bytes)
    seen: set[str] = set()
    for e in walk(end_root, max_depth=limits.max_depth, deadline=deadline, what="recording the run's changes"):
        seen.add(e.rel)
        entry = entries.get(e.rel)
        if entry is not None and _same_stat(e.st, entry, copy_sigs.get(e.rel), created_ns):
            continue  # the common case, decided from the stat alone
        now = of_stat(e.st, e.parent, e.name)
        if e.rel in skipped or now.type == "other":
            continue
        before = base_version(entries[e.rel], created_ns) if e.rel in entries else None
        if before is not None and _unchanged(now, before, copy_sigs.get(e.rel), Located(now, end_root, e.rel),
                                             Located(before, files, e.rel), deadline):
            continue
        after = _hashed(now, e.parent, e.name, limits, recorded)
        if shadow and after.type == "file":  # never brought over: a setuid file the agent made would run as you
            after = after.model_copy(update={"mode": after.mode & ~(stat.S_ISUID | stat.S_ISGID)})
        out.paths[to_text(e.rel)] = Change(before=before, after=after)
    for rel, entry in entries.items():
        if rel not in seen:
            out.paths[to_text(rel)] = Change(before=base_version(entry, created_ns), after=None)
    if save:
        write_atomic(run_dir / CHANGES_FILE, out.model_dump_json())
    return out


def _same_stat(st: os.stat_result, entry: Entry, copy_sig: list[int] | None, created_ns: int) -> bool:
    """Unchanged, by its stat alone: a folder with its mode, a file with the very stat it had (never racy)."""
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISDIR(st.st_mode):
        return entry.type == "dir" and entry.mode == mode
    if not stat.S_ISREG(st.st_mode) or entry.type != "file" or entry.mode != mode:
        return False
    sig = stat_sig(st)
    if copy_sig is not None:
        return sig == copy_sig
    return entry.sig is not None and sig == entry.sig and max(sig[3], sig[4]) < created_ns - RACY_NS


def _unchanged(now: Version, before: Version, copy_sig: list[int] | None, here: Located, base: Located,
               deadline: Deadline) -> bool:
    if now.type != before.type:
        return False
    if now.type == "symlink":
        return now.target == before.target
    if now.mode != before.mode:
        return False
    if now.type != "file":
        return True
    if before.size is not None and now.size != before.size:
        return False
    if now.sig is not None and (now.sig == copy_sig or (before.sig_proves and now.sig == before.sig)):
        return True
    return bool(same_bytes(here, base, deadline))


def _hashed(now: Version, parent: int, name: str, limits: WorkspaceLimits, recorded_ns: int) -> Version:
    """The end version of a file with its hash, and whether its stat alone will prove it later."""
    if now.type != "file":
        return now
    got = open_regular(parent, name)
    if got is None:
        return now
    fd, st = got
    try:
        digest = hash_file(fd, st, limits.hash_max_bytes)
    finally:
        os.close(fd)
    return now.model_copy(update={"sha256": digest, "sig": stat_sig(st), "size": st.st_size,
                                  "sig_proves": max(st.st_mtime_ns, st.st_ctime_ns) < recorded_ns - RACY_NS})


def load_changes(run_dir: Path) -> RunChanges | None:
    """The run's recorded changes, None when it has none (it was killed before its end was recorded)."""
    path = run_dir / CHANGES_FILE
    try:
        return RunChanges.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError, ValidationError) as e:
        msg = (f"{path} is unreadable ({str(e).splitlines()[0]}); without it Tether cannot tell the run's changes "
               f"from yours: move it aside and pass --force to restore every difference from the snapshot")
        raise StateFileError(msg) from e
