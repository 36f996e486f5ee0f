"""Text from the model or the sandbox, made safe to show: in a terminal cell or an HTML page.

`visible()` turns control characters (ESC, CR, BEL, C1, bidi overrides) into
visible `\\xNN` escapes; `cell()` also escapes rich markup and shortens;
`html_text()` also HTML-escapes (quotes included, so it is safe in attributes).
"""

from __future__ import annotations

import html
import re

from rich.markup import escape

# TODO(i14): swap for i10b's terminal-safety function once it is on main (one import).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """`text` with every control character shown as an escape (newline and tab kept)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text)


def cell(text: object, limit: int | None = None) -> str:
    """One table cell: visible, on one line, at most `limit` characters, rich markup escaped."""
    s = visible(str(text)).replace("\n", " ").replace("\t", " ")
    if limit is not None and len(s) > limit:
        s = s[: limit - 1] + "…"
    return escape(s)


def html_text(text: object) -> str:
    """Visible and HTML-escaped (quotes too): safe as element text and as a quoted attribute value."""
    return html.escape(visible(str(text)), quote=True)
