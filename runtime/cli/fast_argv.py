"""The standard-library argv reader of the fast paths (`tether runs`, `tether guard`).

Both run before typer is imported, so they read their plain forms
themselves: flags, `--opt value` and `--opt=value` for the valued options,
and (for the guard) the words of the command, also after `--`. Anything else
is None: the caller hands the line to typer, which gives the usual help and
errors, so the two paths never disagree on what a line means.
"""

from __future__ import annotations

import sys

from tether.runtime.terminal import plain

TYPE_CHECKING = False  # not typing's: the guard's per-call path stays off typing
if TYPE_CHECKING:
    from collections.abc import Collection


def read(argv: list[str], valued: Collection[str], flags: Collection[str], words: bool = False
         ) -> tuple[dict[str, str], set[str], list[str]] | None:
    """(valued options, flags given, command words), or None for a line typer must read."""
    opts: dict[str, str] = {}
    given: set[str] = set()
    rest: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--" and words:
            rest += argv[i + 1 :]
            break
        if a in flags:
            given.add(a)
        elif a in valued:
            if i + 1 >= len(argv):
                return None
            opts[a], i = argv[i + 1], i + 1
        elif "=" in a and a.split("=", 1)[0] in valued:
            key, _, value = a.partition("=")
            opts[key] = value
        elif words and not (a.startswith("-") and a != "-"):
            rest.append(a)
        else:
            return None
        i += 1
    return opts, given, rest


def error(message: str, styled: bool) -> int:
    """`error: message` on stderr (one line, controls shown visibly); the exit code 2."""
    word = "\x1b[1;31merror:\x1b[0m" if styled else "error:"
    sys.stderr.write(f"{word} {plain(message)}\n")
    sys.stderr.flush()
    return 2
