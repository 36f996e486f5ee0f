"""What a run changed in the workspace, read back for `tether show` and `tether report`.

Parts: `ChangesView` (the changed files, the changes to places that run
code on the person's machine and what became of each, why the after-run
check could not be made, and the content diff) and `load_changes()`. The
runner writes `host_code.json` and `changes.diff` once the sandbox is gone
(runtime.run.settle); a run that has not ended yet has none. A damaged
`host_code.json` or `changes.json` is named (`unreadable`), never read as
"nothing changed" nor as "not recorded yet". Text is kept as written and
escaped by whoever shows it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from tether.common.errors import StateFileError
from tether.runtime.workspace.changes import CHANGES_FILE
from tether.runtime.workspace.changes import load_changes as load_record
from tether.runtime.workspace.host_code import read_host_code

DIFF_BYTES = 2_000_000


class ChangesView(BaseModel):
    files: list[dict[str, Any]] = Field(default_factory=list)
    """path, change (added/modified/deleted), hidden (a generated cache), binary, sizes."""
    host_exec: list[dict[str, Any]] = Field(default_factory=list)
    """Each change to a place that runs on the host: path, kind, runs, detail, status (left/removed/undone)."""
    review: list[str] = Field(default_factory=list)
    """Those still left for a person, one line each."""
    error: str = ""
    """Why the after-run check could not be made (the run then needs review)."""
    mode: str = "review"
    diff: str | None = None
    """The content diff (only when asked for)."""
    host_code_unreadable: str = ""
    """Why host_code.json cannot be read: the run may have left code that runs on the host that cannot be shown."""
    record_unreadable: str = ""
    """Why changes.json (what rollback and apply act on) cannot be read."""

    @property
    def counts(self) -> dict[str, int]:
        out = {"added": 0, "modified": 0, "deleted": 0, "hidden": 0}
        for f in self.files:
            out["hidden" if f.get("hidden") else str(f.get("change"))] += 1
        return out


def load_changes(folder: Path, with_diff: bool = False) -> ChangesView | None:
    """The run's changes, or None when the run has not written them (still running, or an older Tether)."""
    doc, why = read_host_code(folder)
    record_why = ""
    if (folder / CHANGES_FILE).exists():
        try:
            load_record(folder)
        except StateFileError as e:
            record_why = str(e)
    if doc is None:
        if not (why or record_why):
            return None
        doc = {}
    view = ChangesView(host_code_unreadable=why, record_unreadable=record_why,
        files=[f for f in doc.get("files") or [] if isinstance(f, dict)],
        host_exec=[c for c in doc.get("host_exec") or [] if isinstance(c, dict)],
        review=[str(r) for r in doc.get("review") or []], error=str(doc.get("error") or ""),
        mode=str(doc.get("mode") or "review"),
    )
    if with_diff:
        view.diff = _read_diff(folder / "changes.diff")
    return view


def _read_diff(path: Path) -> str:
    try:
        with path.open("rb") as fh:
            data = fh.read(DIFF_BYTES + 1)
    except OSError:
        return ""
    text = data[:DIFF_BYTES].decode("utf-8", errors="replace")
    return text + ("\n… (cut; the whole diff is in changes.diff)" if len(data) > DIFF_BYTES else "")
