"""The style (a rich style name) of each run, step and gate status: one table for rich and the plain `tether runs`."""

STYLE: dict[str, str] = {
    "done": "green",
    "running": "cyan",
    "pending": "dim",
    "failed": "red",
    "blocked": "yellow",
    "skipped": "magenta",
    "pass": "green",
    "fail": "red",
    "n/a": "dim",
    "success": "green",
    "interrupted": "yellow",
    "needs-review": "yellow",
    "self-verified": "yellow",
}
