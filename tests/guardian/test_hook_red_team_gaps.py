"""Guardian gaps a blind red-team of the hooks found (guard and hook agreed on them): each now asks."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.guardian.decision import Where
from tether.guardian.judge import judge

WS = Where(Path("/home/p/proj"), home=Path("/home/p"))


@pytest.mark.parametrize(("command", "rule"), [
    ("rm -r ../proj", "FS-003"), ("rm -r /home/p/proj", "FS-003"), ("rm -r .", "FS-003"), ("rm -R .", "FS-003"),
    ("rm --recursive .", "FS-003"),
    ("git checkout .", "GIT-006"), ("git checkout setup.py", "GIT-006"), ("git checkout 'src/*'", "GIT-006"),
    ("git checkout ./src", "GIT-006"), ("git checkout :/docs", "GIT-006"),
    ("echo x > .opencode/plugin/evil.js", "HOSTEXEC-001"), ("echo '{}' > opencode.json", "HOSTEXEC-001"),
    ("cp x.js .opencode/plugins/", "HOSTEXEC-001"),
])
def test_neighbours_now_ask(command: str, rule: str) -> None:
    v = judge(command, WS)
    assert rule in v.rules and v.decision != "allow", (command, v.rules)


@pytest.mark.parametrize("command", [
    "rm -r build", "rm -r ./dist node_modules", "git checkout main", "git checkout feature/x", "git checkout v1.2",
    "git checkout -b topic", "cat opencode.json",
])
def test_ordinary_stays_allowed(command: str) -> None:
    assert judge(command, WS).decision == "allow", command
