"""The content diff of a run: what each changed file held before and holds now, bounded, as text.

Parts: `FileChange` (one path: how it changed, hidden or not, binary or
not), `content_diff(start, end, before, after, shown_paths)` -> (list of
`FileChange`, unified diff text). Text files are diffed inline (a unified
diff, cut at `MAX_LINES` lines a file); binary files, symlinks and mode
changes are summarised in one line; generated caches (`__pycache__`,
`.pytest_cache`, ...) are counted but left out unless `shown_paths` names
them (a cache that does not match its source is a change to look at).
The before side comes from the run's snapshot, read by descriptor; when the
snapshot is gone, that is said instead of guessing. Text is stored as it
is (undecodable bytes replaced); every view escapes it before showing it.
"""

from __future__ import annotations

import difflib
import hashlib
import stat
from typing import Literal

from pydantic import BaseModel

from tether.common.hostexec_check import Tree
from tether.common.manifest import FileState, diff
from tether.common.walk import shown
from tether.gate.evidence import is_generated

MAX_FILE_BYTES = 256 << 10
"""Bytes of each side read for an inline diff; a larger file is summarised."""
MAX_LINES = 400
"""Diff lines kept per file."""
MAX_TOTAL = 2 << 20
"""Characters of diff text kept for the whole run."""


class FileChange(BaseModel):
    path: str
    change: Literal["added", "modified", "deleted"]
    hidden: bool = False
    """A generated cache, left out of the diff text (counted)."""
    binary: bool = False
    size_before: int | None = None
    size_after: int | None = None


def _text(data: bytes | None) -> str | None:
    """The bytes as text, or None when they look binary (a NUL, or not UTF-8)."""
    if data is None:
        return None
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _kind(state: FileState | None) -> str:
    if state is None:
        return "absent"
    return f"symlink -> {shown(state.link)}" if state.link is not None else f"mode {stat.S_IMODE(state.mode):o}"


def _one(rel: str, change: str, old: FileState | None, new: FileState | None, before: Tree,
         after: Tree) -> tuple[list[str], bool]:
    """Diff lines of one path (headers included) and whether it was summarised as binary."""
    name = shown(rel)
    head = [f"diff --tether a/{name} b/{name}"]
    if (old and old.link is not None) or (new and new.link is not None):
        return [*head, f"  {_kind(old)}  =>  {_kind(new)}"], False
    if old and new and old.mode != new.mode:
        head.append(f"  mode {stat.S_IMODE(old.mode):o} => {stat.S_IMODE(new.mode):o}")
    if old and new and old.sha256 == new.sha256:
        return head, False
    a = before.read(rel, MAX_FILE_BYTES + 1) if old else b""
    b = after.read(rel, MAX_FILE_BYTES + 1) if new else b""
    if old and a is None:
        return [*head, f"  (the pre-run copy is gone: snapshot pruned; now {new.size if new else 0} bytes)"], False
    too_big = (old and old.size > MAX_FILE_BYTES) or (new and new.size > MAX_FILE_BYTES)
    ta, tb = _text(a), _text(b)
    if too_big or ta is None or tb is None:
        digest = {s: hashlib.sha256(d or b"").hexdigest()[:12] for s, d in (("a", a), ("b", b))}
        what = "large file" if too_big and ta is not None and tb is not None else "binary file"
        return [*head, f"  {what}: {old.size if old else 0} bytes ({digest['a'] if old else '-'}) => "
                       f"{new.size if new else 0} bytes ({digest['b'] if new else '-'})"], True
    lines = list(difflib.unified_diff(ta.splitlines(keepends=True), tb.splitlines(keepends=True),
                                      "/dev/null" if change == "added" else f"a/{name}",
                                      "/dev/null" if change == "deleted" else f"b/{name}", n=3))
    body = [ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n" for ln in lines[:MAX_LINES]]
    if len(lines) > MAX_LINES:
        body.append(f"... {len(lines) - MAX_LINES} more diff lines of {name} cut\n")
    return head + ["".join(body).rstrip("\n")], False


def content_diff(start: dict[str, FileState], end: dict[str, FileState], before: Tree, after: Tree,
                 shown_paths: set[str] | None = None) -> tuple[list[FileChange], str]:
    """Every changed path and the diff text of those not hidden (text inline, the rest summarised)."""
    delta = diff(start, end)
    keep = shown_paths or set()
    files: list[FileChange] = []
    out: list[str] = []
    size = 0
    for rel in delta.changed:
        change = "added" if rel in delta.added else "deleted" if rel in delta.deleted else "modified"
        old, new = start.get(rel), end.get(rel)
        hidden = is_generated(shown(rel)) and shown(rel) not in keep
        item = FileChange(path=shown(rel), change=change, hidden=hidden,  # type: ignore[arg-type]
                          size_before=old.size if old else None, size_after=new.size if new else None)
        files.append(item)
        if hidden:
            continue
        if size > MAX_TOTAL:
            continue
        lines, item.binary = _one(rel, change, old, new, before, after)
        text = "\n".join(lines) + "\n"
        size += len(text)
        out.append(text if size <= MAX_TOTAL else f"... diff cut at {MAX_TOTAL} characters\n")
    return files, "".join(out)
