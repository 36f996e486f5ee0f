"""`tether hook AGENT` without typer or rich: the per-command hook path of other agents.

The agent starts it once per tool call with its payload on stdin; `main`
reads at most `MAX_PAYLOAD + 1` bytes, hands them to `runtime.agents.hook`,
writes the agent's answer and returns its exit code. Anything but one known
agent name (`--help`, `install`, ...) returns None and the typer app handles
it. An error before an answer exists exits 2 with one line on stderr, which
every supported agent reads as a block.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def main(argv: list[str]) -> int | None:
    """Run `tether hook AGENT` for a known agent; None to let typer do the rest."""
    from tether.runtime.agents.registry import NAMES

    if len(argv) != 1 or argv[0] not in NAMES:
        return None
    from tether.runtime.agents.hook import MAX_PAYLOAD, handle

    try:
        data = sys.stdin.buffer.read(MAX_PAYLOAD + 1)
    except OSError as e:
        sys.stderr.write(f"Tether's hook blocked this call: cannot read the payload: {e}\n")
        return 2
    answer, record = handle(argv[0], data, Path(os.path.expanduser("~")))
    if answer.stdout:
        sys.stdout.write(answer.stdout)
        sys.stdout.flush()
    if answer.stderr:
        sys.stderr.write(answer.stderr)
        sys.stderr.flush()
    del record
    return answer.code
