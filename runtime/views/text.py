"""Run text shown in a `tether runs`/`show` cell or in the HTML report, made safe first.

Both build on runtime.terminal (control characters shown as visible escapes):
`cell()` also puts the text on one line, shortens it and escapes rich markup;
`html_text()` also HTML-escapes it, quotes included, so it is safe as element
text and as a quoted attribute value.
"""

from __future__ import annotations

import html

from rich.markup import escape

from tether.runtime.terminal import one_line, plain


def cell(text: object, limit: int = 100_000) -> str:
    """One table cell: visible, on one line, at most `limit` characters, rich markup escaped."""
    return escape(one_line(text, limit))


def html_text(text: object) -> str:
    """Visible and HTML-escaped (quotes too)."""
    return html.escape(plain(text), quote=True)
