"""sed: the text of `s///` and `a`/`i`/`c` is data, file names are not scripts, `-e` values are not files."""

from __future__ import annotations

import pytest

from tests.guardian.guard_helpers import judge
from tether.guardian.escapes import sed_script


@pytest.mark.parametrize("script", [
    "s/foo/bar/", "s/x/{e y}/", "s/except E as e; pass/pass/", "/x/a\\\n    e = 1", "10a     e = 1",
    "$a e rm -rf /", "/^$/N;/\\n$/D", "s/a/b/w out", "1!G;h;$!d", "y/abc/xyz/",
])
def test_data_in_a_sed_script_runs_nothing(script: str) -> None:
    assert sed_script(script) == [], script


@pytest.mark.parametrize(("script", "kind"), [
    ("s/a/b/e", "rule"), ("s:a:b:ge", "rule"), ("/x/s/a/b/e", "rule"), ("1e rm -rf /", "shell"),
    ("s/a/b/;e rm -rf /", "shell"), ("/x/e id", "shell"), ("e", "rule"), ("n;e", "rule"),
    ("s/a/b/I\n/x/e cat /etc/shadow", "shell"), ("/x/a\\\ntext\ne id", "shell"),
])
def test_sed_commands_that_run_something(script: str, kind: str) -> None:
    assert [a.kind for a in sed_script(script)] == [kind], script


@pytest.mark.parametrize("ws", ["/app", "/testbed", "/home/tether/project"])
@pytest.mark.parametrize("command", [
    "sed -i -e '/^$/N;/\\n$/D' README.rst", "sed -i -e 's/a/b/' -e 's/c/d/' a.py b.py",
    "sed -i 's/{x}/{e y}/' src/tmpl.py", "sed -i '/^import os$/a import sys' a.py",
    "sed -i.bak 's/a/b/' a.py", "sed -n 's/^version = //p' setup.cfg",
])
def test_ordinary_seds_are_allowed(ws: str, command: str) -> None:
    v = judge(command, workspace=ws)
    assert v.decision == "allow", (command, v.reason)


@pytest.mark.parametrize("command", [
    "sed -i -e 's/a/b/' /etc/passwd", "sed -Ei 's/a/b/' /etc/hosts", "sed -ni 's/a/b/' /etc/hosts",
    "sed --in-place=.bak -e 's/x/y/' ../outside.py", "sed -i -f script.sed /etc/hosts",
    "sed '1e rm -rf /' a.txt", "sed 's/x/y/e' a.txt",
])
def test_seds_that_write_outside_or_run_commands_are_caught(command: str) -> None:
    assert judge(command, workspace="/app").decision != "allow", command
