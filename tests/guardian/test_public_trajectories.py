"""Real agents' commands from public trajectories stay quiet in their own folder (issue 19's measure)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tether.guardian import CheckContext, check

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "corpora" / "workspace_trajectories_public.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]


def test_every_row_names_its_public_source() -> None:
    assert len(ROWS) > 100
    assert all(r["source"].startswith("github:") and "@" in r["source"] for r in ROWS)


@pytest.mark.parametrize("sandbox", [False, True], ids=["host", "sandbox"])
def test_ordinary_agent_commands_are_allowed_and_uploads_asked(sandbox: bool) -> None:
    wrong = []
    for r in ROWS:
        v = check(r["command"], CheckContext(workspace=r["workspace"], cwd=r["workspace"], sandbox=sandbox))
        if (v.decision == "allow") != (r["expected"] == "allow"):
            wrong.append((r["command"][:80], r["workspace"], v.decision, v.rules))
    assert wrong == []
