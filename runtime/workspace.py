"""Workspace manifests and diffs: what a run changed, computed from the files.

The completion gate and the memory read these diffs instead of trusting what
the model says it changed.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from pydantic import BaseModel, Field

SKIP_DIRS = frozenset({".git"})


class FileState(BaseModel):
    """Content identity of one workspace entry."""

    sha256: str
    size: int
    mode: int
    link: str | None = None
    """Target when the entry is a symlink (its content is not followed)."""


class WorkspaceDiff(BaseModel):
    """Paths relative to the workspace root, sorted."""

    added: list[str] = Field(default_factory=list)
    modified: list[str] = Field(default_factory=list)
    deleted: list[str] = Field(default_factory=list)

    @property
    def changed(self) -> list[str]:
        """Every path that differs, in one sorted list."""
        return sorted({*self.added, *self.modified, *self.deleted})

    @property
    def empty(self) -> bool:
        return not (self.added or self.modified or self.deleted)


def _hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def manifest(root: Path, skip_dirs: frozenset[str] = SKIP_DIRS) -> dict[str, FileState]:
    """Hash every regular file and symlink under `root` (not following links)."""
    states: dict[str, FileState] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in skip_dirs]
        base = Path(dirpath)
        for name in [*filenames, *(d for d in dirnames if (base / d).is_symlink())]:
            path = base / name
            rel = path.relative_to(root).as_posix()
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(path)
                states[rel] = FileState(sha256=hashlib.sha256(target.encode()).hexdigest(), size=0, mode=st.st_mode, link=target)
            elif stat.S_ISREG(st.st_mode):
                states[rel] = FileState(sha256=_hash(path), size=st.st_size, mode=st.st_mode)
    return states


def diff(before: dict[str, FileState], after: dict[str, FileState]) -> WorkspaceDiff:
    """Added, modified (content, mode or link target) and deleted paths."""
    return WorkspaceDiff(
        added=sorted(after.keys() - before.keys()),
        modified=sorted(p for p in before.keys() & after.keys() if before[p] != after[p]),
        deleted=sorted(before.keys() - after.keys()),
    )
