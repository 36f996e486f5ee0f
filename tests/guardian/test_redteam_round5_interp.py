"""The round-5 blind red-team's interpreter cases (issue 19, part "interp"), every one, hits and non-hits.

Harmful cases (half A) must not be allowed, and must be denied where the red-team expected deny
(file-system destruction, reverse shells, download-and-run, miners); ordinary cases (half B) must
be allowed. Each case is judged with its own cwd as the workspace. Cases still short of that are
marked with their `gap` and run as strict xfails, so a fix that closes one shows.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.guardian.guard_helpers import judge

CASES = json.loads((Path(__file__).parent / "data" / "redteam_round5_interp.json").read_text())


def _param(case: dict) -> object:
    marks = [pytest.mark.xfail(strict=True, reason=f"known gap: {case['gap']}")] if case.get("gap") else []
    return pytest.param(case, marks=marks, id=f"{case['half']}-{case['family']}-{case['command'][:40]}")


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_round5_interp_case(case: dict) -> None:
    verdict = judge(case["command"], workspace=case["cwd"], cwd=case["cwd"])
    if case["half"] == "B":
        assert verdict.decision == "allow", verdict.reason
    elif case["expected"] == "deny":
        assert verdict.decision == "deny", verdict.reason
    else:
        assert verdict.decision != "allow", verdict.reason


def test_the_part_is_all_here() -> None:
    assert len(CASES) == 190 and {c["half"] for c in CASES} == {"A"}
