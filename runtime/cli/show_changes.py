"""`tether show`'s part about the workspace: the files the run changed, what of it runs on your machine, the diff.

Every name and line comes from the workspace the model controlled: each is
escaped (runtime.views.text.cell, runtime.terminal.plain) before it reaches
the terminal, and diff lines are printed as rich Text, never as markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from tether.runtime.cli.common import out
from tether.runtime.terminal import plain
from tether.runtime.views.text import cell

if TYPE_CHECKING:
    from tether.runtime.views.run_view import RunView

LISTED = 60
"""Changed files listed by name (the rest are counted)."""
MARK = {"added": "A", "modified": "M", "deleted": "D"}
STYLE = {"+": "green", "-": "red", "@": "cyan"}


def show_changes(view: RunView, with_diff: bool) -> None:
    """The changed files (caches counted, not listed), host code left or undone, and the diff when asked."""
    ch = view.changes
    if ch is None:
        if view.status in ("running", "interrupted"):
            out.print("[dim]changes: not recorded yet (the run has not ended)[/]")
        else:
            out.print(f"[bold yellow]changes: not recorded[/] (run {cell(view.run_id)} ended {cell(view.status)} "
                      "without its after-run check: what it left, code that runs on your machine included, is not "
                      "known; look at `git status`)")
        return
    if ch.record_unreadable:
        out.print(f"[bold red]changes record:[/] {cell(ch.record_unreadable, 500)}")
    if ch.host_code_unreadable:
        out.print(f"[bold red]code that runs on your machine: cannot be shown:[/] {cell(ch.host_code_unreadable, 500)}")
        return
    n = ch.counts
    out.print(f"[bold]changes:[/] {n['added']} added, {n['modified']} modified, {n['deleted']} deleted"
              + (f" ({n['hidden']} generated cache file(s) not listed)" if n["hidden"] else ""))
    flagged = {str(c.get("path")): c for c in ch.host_exec}
    shown = [f for f in ch.files if not f.get("hidden")]
    for f in shown[:LISTED]:
        path = str(f.get("path"))
        note = ""
        if path in flagged:
            c = flagged[path]
            note = f"  [yellow]{cell(c.get('kind'))}: {cell(c.get('status'))}[/]"
        out.print(f"  {MARK.get(str(f.get('change')), '?')} {cell(path, 200)}{note}")
    if len(shown) > LISTED:
        out.print(f"  … and {len(shown) - LISTED} more (`tether show {cell(view.run_id)} --diff`)")
    for line in ch.review:
        out.print(f"[bold yellow]code that runs on your machine:[/] "
                  f"{cell(line.removeprefix('code that runs on your machine: '), 400)}")
    for c in ch.host_exec:
        if c.get("status") in ("undone", "removed"):
            what = "put back as before the run" if c.get("status") == "undone" and c.get("change") != "added" \
                else "removed"
            out.print(f"[green]{what}:[/] {cell(c.get('path'), 200)} ({cell(c.get('kind'))}"
                      + (f": {cell(c.get('detail'), 200)}" if c.get("detail") else "") + ")")
    if ch.error:
        out.print(f"[bold red]not checked:[/] {cell(ch.error, 300)}")
    if with_diff:
        _diff(ch.diff or "")
    elif shown:
        out.print(f"[dim]content diff: `tether show {cell(view.run_id)} --diff`[/]")


def _diff(text: str) -> None:
    if not text:
        out.print("[dim]no content diff (nothing but caches changed)[/]")
        return
    for line in text.splitlines():
        style = "bold" if line.startswith("diff --tether ") else STYLE.get(line[:1], "")
        if line.startswith(("+++", "---")):
            style = "bold"
        out.print(Text(plain(line), style=style), soft_wrap=True)
