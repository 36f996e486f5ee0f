"""Helpers for the guardian tests: a fixed context and a `judge` call."""

from __future__ import annotations

from guardian import CheckContext, check
from guardian.verdict import Verdict

WS = "/home/tether/project"
CTX = CheckContext(workspace=WS, home="/home/tether")


def judge(command: str, **kw: object) -> Verdict:
    """Check `command` in the standard test workspace."""
    ctx = CheckContext(workspace=kw.pop("workspace", WS), cwd=kw.pop("cwd", None),
                       home=kw.pop("home", "/home/tether"))
    return check(command, ctx, kw.pop("config", None))  # type: ignore[arg-type]
