"""Ordinary commands that only look dangerous stay allowed; their harmful twins do not.

Each family: danger text that is only data (printed, searched for, written to a
file), globs that select entries inside a folder, `find -exec` on matches,
mktemp/pwd/dirname results, and the arithmetic command `(( ))`.
"""

from __future__ import annotations

import pytest

from tests.guardian.guard_helpers import judge

ALLOW = [
    # danger text that is only data
    "echo ':(){ :|:& };:' > tests/fixtures/fork.txt",
    "printf '%s\\n' 'bomb(){ bomb|bomb& }; bomb' >> tests/data/bombs.txt",
    "cat > docs/x.md <<'EOF'\nNever run rm -rf / or :(){ :|:& };:\nEOF",
    "grep -rn '/etc/shadow' tests/",
    "rg -n '~/.ssh/id_rsa' src docs",
    "grep -e /etc/sudoers -e /etc/shadow -r docs",
    "git grep -n /etc/shadow -- src",
    "sed -e 's#/etc/shadow#/tmp/x#' config.txt",
    "printf 'curl x | sh' >> notes.txt",
    "echo /etc/shadow is where hashes live",
    # globs that select entries inside a folder
    "rm -rf build dist *.egg-info",
    "rm -rf */node_modules",
    "rm -f *.pyc",
    "rm -rf .pytest_cache htmlcov .coverage*",
    # find -exec on matches, not on the root
    "find . -name __pycache__ -type d -prune -exec rm -rf {} +",
    "find . -type d -name node_modules -exec rm -rf {} \\;",
    "find src -name '*.orig' -exec rm -f {} +",
    # values known statically
    "TMP=$(mktemp -d) && cp -r src \"$TMP\"/",
    "TMP=$(mktemp -d) && trap 'rm -rf \"$TMP\"' EXIT && make DESTDIR=\"$TMP\" install",
    "cd \"$(dirname \"$0\")\" && ls",
    # arithmetic
    "(( $(nproc) > 4 )) && make -j8",
    "for ((i=0; i<3; i++)); do echo $i; done",
    "x=1; (( x > 0 )) && echo positive",
]

DENY_OR_ASK = [
    ":(){ :|:& };:",
    "echo ':(){ :|:& };:' | bash",
    "cat /etc/shadow",
    "grep root /etc/shadow",
    "grep -f /etc/shadow x",
    "awk -F: '{print $1}' /etc/shadow",
    "rm -rf *",
    "rm -rf ./*",
    "rm -rf ~/*",
    "rm -rf /*.txt",
    "find . -exec rm -rf {} +",
    "find . ! -name keep -exec rm -rf {} +",
    "find . -name x -o -name y -exec rm -rf {} +",
    "find . -mindepth 1 -exec rm -rf {} +",
    "find / -name '*.log' -exec rm -rf {} +",
    "D=$(mktemp -d -p /etc x.XXX) && rm -rf \"$D\"",
    "rm -rf \"$(pwd)\"",
    "cd \"$D\" && rm -rf `pwd`/x",  # the walker lost the cwd: pwd is unknown (in the workspace it is judged)
    "(( $(rm -rf /) > 4 )) && make -j8",
    "((a[$(rm -rf /)]++))",
    "x='a[$(rm -rf /)]'; (( x ))",
    "for (( i=$(rm -rf /); i<3; i++ )); do :; done",
    "((ls); rm -rf /)",
]


@pytest.mark.parametrize("command", ALLOW)
def test_ordinary_is_allowed(command: str) -> None:
    v = judge(command)
    assert v.decision == "allow", (command, v.rules, v.reason)


@pytest.mark.parametrize("command", DENY_OR_ASK)
def test_harmful_twin_is_not_allowed(command: str) -> None:
    v = judge(command)
    assert v.decision != "allow", (command, v.decoded)
