"""The person's check line, run so that code it sources cannot end it as a pass.

`sealed()` appends a line that prints a per-gate mark with the line's
status; `unsealed()` reads it back. A check whose shell ended before that
line (an `exit 0` or `exec` in a file it sources, a `return` at its top)
has no mark and counts as failing, whatever its exit code. The mark is
random per gate and written into the shell's own script, so only code that
reads the gate's command line could forge it (not modelled; docs/agent.md).
"""

from __future__ import annotations

import re

FAILED_EARLY = 125
"""The exit code a check gets when its shell ended before its last line (no mark)."""


def sealed(command: str, token: str) -> str:
    """`command`, then a line printing `<mark>:<status>` (the line's status is kept as the shell's)."""
    mark = f"tether-done-{token}"
    return f"{command}\n__s=$?; printf '\\n{mark}:%d\\n' \"$__s\"; exit \"$__s\""


def unsealed(code: int, output: str, token: str) -> tuple[int, str, bool]:
    """(exit code, output without the mark, whether the mark was there); no mark: FAILED_EARLY unless it failed."""
    mark = f"tether-done-{token}"
    found = list(re.finditer(rf"\n?{re.escape(mark)}:(\d+)\n?", output))
    if not found:
        return (code if code != 0 else FAILED_EARLY), output, False
    last = found[-1]
    text = output[:last.start()] + output[last.end():]
    return (code if code != 0 else int(last.group(1))), text, True
