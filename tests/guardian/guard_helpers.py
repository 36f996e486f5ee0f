"""Helpers for the guardian tests: a fixed context and a `judge` call."""

from __future__ import annotations

from tether.guardian import CheckContext, GuardianConfig, check
from tether.guardian.verdict import Verdict

WS = "/home/tether/project"
CTX = CheckContext(workspace=WS, home="/home/tether")


_ROOMY = GuardianConfig(time_budget_ms=10_000)
"""Tests judge decisions, not speed (bench/guardian_speed.py measures that): on a
loaded CI machine the default 250 ms budget would turn a slow check into GUARD-FAIL."""


def judge(command: str, **kw: object) -> Verdict:
    """Check `command` in the standard test workspace (a roomy time budget unless given)."""
    ctx = CheckContext(workspace=kw.pop("workspace", WS), cwd=kw.pop("cwd", None),
                       home=kw.pop("home", "/home/tether"))
    return check(command, ctx, kw.pop("config", None) or _ROOMY)  # type: ignore[arg-type]
