"""gate.tamper: a shell file the project's bats tests load (`load ../lib.sh`) that now defines a command or bats
helper, or sets PATH, is named even when the goal names the file; a real fix of its functions is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.common.manifest import manifest
from tether.gate.tamper import support_changes

BATS = 'load ../lib.sh\n@test "greets" {\n  run greet tether\n  [ "$output" = "hello, tether" ]\n}\n'
LIB = 'greet() {\n  echo "hi $1"\n}\n'


def _lines(tmp_path: Path, new_lib: str) -> list[str]:
    b, a = tmp_path / "before", tmp_path / "after"
    for root, lib in ((b, LIB), (a, new_lib)):
        (root / "test").mkdir(parents=True)
        (root / "test" / "greet.bats").write_text(BATS)
        (root / "lib.sh").write_text(lib)
    return support_changes(manifest(b), manifest(a), b, ["lib.sh"], [], a)


@pytest.mark.parametrize("added", [
    'run() { status=0; output="hello, tether"; }\n',
    'function [ { return 0; }\n',
    'PATH="$BATS_TEST_DIRNAME/../tools:$PATH"\n',
    'export PATH=./bin:$PATH\n',
])
def test_a_loaded_file_that_now_shadows_what_the_tests_run_is_named(tmp_path, added):
    found = _lines(tmp_path, LIB + added)
    assert found and all(line.startswith("tampering: lib.sh, which the project's tests load") for line in found)


def test_the_goal_named_fix_of_a_loaded_file_is_the_change(tmp_path):
    assert _lines(tmp_path, 'greet() {\n  echo "hello, $1"\n}\nfarewell() {\n  echo "bye, $1"\n}\n') == []
