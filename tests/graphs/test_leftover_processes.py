"""R15 end to end: a leftover disguised as Tether's own probe still fails the gate."""

from __future__ import annotations

from pathlib import Path

import pytest

SCENARIOS = Path(__file__).parent / "scenarios"

pytestmark = pytest.mark.docker


def test_a_leftover_named_like_the_probe_fails_r15(tether):
    code, out, err = tether.run(SCENARIOS / "disguised-leftover.yaml")
    assert code == 1, err
    failed = {rid for rid, r in out["gate"].items() if r["status"] == "fail"}
    assert failed == {"R15"}, out  # the leftover (a bash that stopped itself) touches no file: R15 alone
    assert "tr -d x" in out["gate"]["R15"]["evidence"]


def test_no_false_leftover_from_the_timeout_wrapper_of_a_command_with_control_characters(tether):
    """busybox `timeout` keeps a watchdog for up to a second; its argv (the command) may hold \\r."""
    _, out, err = tether.run(SCENARIOS / "hostile-text.yaml")
    assert out["gate"]["R15"]["status"] == "pass", out["gate"]["R15"]
