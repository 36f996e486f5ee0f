"""Terminal safety: text from the model or the sandbox made harmless to print.

Anything a model writes (command text, summaries, reasons) or a sandbox
prints (output, file names, process listings) may carry bytes a terminal
obeys: ESC/CSI sequences clear the screen or move the cursor, OSC 8 makes
hidden links, `\\r` and backspace overwrite what was printed, bidi overrides
(U+202E) reorder a line so that the person approves a command other than the
one they read, and rich reads `[bold]...[/]` as markup. Every output path
(rich tables, the approval prompt, error messages, listings, logs) passes
such text through one of two functions here:

- `safe(text)`: for rich with markup on (``console.print(f"... {safe(x)}")``
  and every `Table.add_row` cell): control characters shown visibly *and*
  rich markup escaped.
- `plain(text)`: for output that is not rich markup (``markup=False``
  prints, `typer.echo`, log records, exception messages): control characters
  shown visibly only.

A character is shown as a visible escape: `\\x1b` for C0/DEL/C1 controls (`\\r` for CR),
`\\u202e` for format/bidi/separator characters, and a byte that arrived as a
surrogate escape (an undecodable file name, `errors="surrogateescape"`) as
`\\xff`. `\\n` and `\\t` are kept. Escaped: every Unicode Cc (C0 but `\\n` and
`\\t`, DEL, C1), Cf (bidi embeddings/overrides/isolates, zero-width
characters, BOM, tag characters), Zl/Zp (line/paragraph separators) and Cs
(lone surrogates). tests/runtime/test_terminal.py checks that list against
`unicodedata` for every code point.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile(
    "["
    "\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but \t \n, DEL, C1
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u206f"  # zero-width, LRM/RLM, separators, embeddings/overrides, isolates
    "\ud800-\udfff"  # lone surrogates (surrogate-escaped bytes)
    "\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e007f"  # tag characters (invisible ASCII look-alikes)
    "]"
)


def _visible(m: re.Match[str]) -> str:
    code = ord(m.group())
    if code == 0x0D:
        return "\\r"
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape of an undecodable byte
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def plain(text: object) -> str:
    """`text` with every terminal control character shown as a visible escape.

    For output that rich does not parse as markup, and for logs. Keeps `\\n`
    and `\\t`; `str()`s anything that is not a string.
    """
    s = text if isinstance(text, str) else str(text)
    return _UNSAFE.sub(_visible, s) if _UNSAFE.search(s) else s


def safe(text: object) -> str:
    """`plain(text)` with rich markup escaped: for `console.print` with markup and table cells."""
    from rich.markup import escape

    return escape(plain(text))


def one_line(text: object, limit: int = 200) -> str:
    """`plain(text)` on one line (newlines shown as `\\n`), cut to `limit` characters."""
    s = plain(text).replace("\n", "\\n").replace("\t", "\\t")
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _plain_formatter() -> type:
    import logging

    class PlainFormatter(logging.Formatter):
        """A log formatter whose every record (message, arguments, traceback) is `plain()`ed."""

        def format(self, record: logging.LogRecord) -> str:
            return plain(super().format(record))

    return PlainFormatter


def __getattr__(name: str) -> object:
    """`PlainFormatter`, made on first use: logging is not imported by the paths that print without it."""
    if name == "PlainFormatter":
        globals()[name] = cls = _plain_formatter()
        return cls
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)


def install_log_filter(level: int | None = None) -> None:
    """Configure root logging to stderr with `PlainFormatter` (the CLI calls this once; default level WARNING)."""
    import logging

    logging.basicConfig(level=logging.WARNING if level is None else level)
    formatter = globals().get("PlainFormatter") or __getattr__("PlainFormatter")
    for handler in logging.getLogger().handlers:
        handler.setFormatter(formatter("%(levelname)s %(name)s: %(message)s"))
