"""The report's "Changes" section: files the run changed, what of it runs on the person's machine, the diff.

Every path, detail and diff line is run text: it goes through `html_text()`
(control characters visible, HTML-escaped). Diff lines are coloured by
their first character only, with classes, never with run text in markup.
"""

from __future__ import annotations

from tether.runtime.views.changes_view import ChangesView
from tether.runtime.views.text import html_text as h

LISTED = 400
CSS = """
.dl{display:block;white-space:pre-wrap;word-break:break-all}
.dl.add{background:#e6ffec}.dl.del{background:#ffebe9}.dl.hunk{color:#0969da}.dl.file{font-weight:700;margin-top:6px}
.host{background:#fff4e5;border:1px solid #f0b46c;padding:6px 10px;border-radius:4px;margin:6px 0}
.undone{background:#e8f5e9;border:1px solid #81c784;padding:6px 10px;border-radius:4px;margin:6px 0}
"""
_CLASS = {"+": "add", "-": "del", "@": "hunk"}


def _line(text: str) -> str:
    kind = "file" if text.startswith(("diff --tether ", "+++", "---")) else _CLASS.get(text[:1], "")
    return f'<span class="dl {kind}">{h(text) or "&#8203;"}</span>'


def changes_html(ch: ChangesView | None, status: str = "running") -> str:
    """The section (an explanation when the run has not recorded its changes, or the record is damaged)."""
    if ch is None:
        if status in ("running", "interrupted"):
            return "<h2>Changes</h2><p>Not recorded yet: the run has not ended.</p>"
        return (f'<h2>Changes</h2><div class="host"><b>Not recorded:</b> the run ended {h(status)} without its '
                "after-run check: what it left, code that runs on your machine included, is not known.</div>")
    head = "<h2>Changes</h2>"
    if ch.record_unreadable:
        head += f'<div class="host"><b>changes record:</b> {h(ch.record_unreadable)}</div>'
    if ch.host_code_unreadable:
        return head + (f'<div class="host"><b>code that runs on your machine: cannot be shown:</b> '
                       f"{h(ch.host_code_unreadable)}</div>")
    n = ch.counts
    parts = [f"{head}<p>{n['added']} added, {n['modified']} modified, {n['deleted']} deleted"
             + (f"; {n['hidden']} generated cache file(s) not listed" if n["hidden"] else "") + "</p>"]
    parts += [f'<div class="host"><b>code that runs on your machine:</b> '
              f'{h(r.removeprefix("code that runs on your machine: "))}</div>' for r in ch.review]
    for c in ch.host_exec:
        if c.get("status") in ("undone", "removed"):
            what = "put back as before the run" if c.get("status") == "undone" and c.get("change") != "added" \
                else "removed"
            parts.append(f'<div class="undone"><b>{what}:</b> <code>{h(c.get("path"))}</code> '
                         f'({h(c.get("kind"))}{": " + h(c.get("detail")) if c.get("detail") else ""})</div>')
    if ch.error:
        parts.append(f'<div class="host"><b>not checked:</b> {h(ch.error)}</div>')
    flagged = {str(c.get("path")): c for c in ch.host_exec}
    rows = "".join(
        f"<tr><td>{h(f.get('change'))}</td><td class=mono>{h(f.get('path'))}</td>"
        f"<td>{h(flagged[str(f.get('path'))].get('kind')) if str(f.get('path')) in flagged else ''}</td></tr>"
        for f in [f for f in ch.files if not f.get("hidden")][:LISTED])
    if rows:
        parts.append(f"<table><tr><th>change</th><th>path</th><th>runs on your machine</th></tr>{rows}</table>")
    if ch.diff:
        body = "".join(_line(t) for t in ch.diff.splitlines())
        parts.append(f'<details open><summary>content diff</summary><div class="diff">{body}</div></details>')
    return "".join(parts)
