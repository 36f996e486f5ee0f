"""`python -m MODULE` runs MODULE as a program: the rules for that program see it (pip through python -m)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.guardian.decision import Where
from tether.guardian.judge import judge

WS = Where(Path("/app"))


@pytest.mark.parametrize("command", [
    "python -m pip install numpy", "python3 -m pip uninstall -y six", "python3 -Im pip install x",
    "python -W ignore -m pip install x", "python -mpip install requests", "py -m pip install x",
    "sudo python3 -m pip install x", "python3.12 -m pip install --user x", "python3 -m pip.__main__ install x",
    "python3 -X importtime -m pip install x", "python -E -s -m pip install x",
])
def test_python_m_pip_is_judged_like_pip(command: str) -> None:
    v = judge(command, WS)
    assert "PKG-001" in v.rules and v.decision == "ask", (command, v.rules)


@pytest.mark.parametrize("command", [
    "python -m pytest -q", "python -m venv .venv", "python3 -m pip install -e .",
    "python3 -m pip install -r requirements.txt", "python -c 'print(1)' -m pip", "python -m json.tool a.json",
])
def test_ordinary_module_runs_stay_allowed(command: str) -> None:
    assert judge(command, WS).decision == "allow", command


def test_a_module_run_carries_its_payload() -> None:
    assert judge("python3 -m pip install --index-url x '--global-option=$(rm -rf ~)' y", WS).decision != "allow"
