"""`&&`, `||` and `&` inside `$(..)`, and `$(..)` inside `$(( ))`: lifted, still checked."""

from __future__ import annotations

import pytest
from guard_helpers import judge

from tether.guardian.lift import MARK, rewrite
from tether.guardian.parse import parse_line

ALLOW = [
    "echo $(ls && pwd)",
    'DIR="$( cd "$(dirname "$0")" && pwd )"',
    'cd "$(git rev-parse --show-toplevel || pwd)"',
    'cd "$(dirname "$0")" && pwd',
    'echo "$(date) $(whoami && id)"',
    "echo $(( $(date +%s) / 60 ))",
    "echo $(( $(wc -l < f) + $(( 2 * 3 )) ))",
    "echo $(( `date +%s` + 1 ))",
    "echo $(ls; pwd)", "echo $(ls | wc -l)", "echo $(if true; then ls; fi)",
    'echo "$(a "b c" d)"', "echo $( echo \"a)\" && ls )",
    "for f in $(ls && pwd); do echo $f; done",
    'while [ "$(pgrep x || true)" ]; do sleep 1; done',
    "git log $(git describe --tags || echo HEAD)..HEAD",
    "a=( $(ls && pwd) )", "cat <(ls && pwd)", "echo $(ls && pwd) > out.txt",
]

DENY = [
    "echo $(true && rm -rf /)",
    "x=$(cd / && rm -rf *)",
    "cd / && echo $(true && rm -rf *)",
    "echo $(( $(rm -rf /) + 1 ))",
    "echo $(( $(a && rm -rf /) ))",
    "echo $(( `rm -rf /` + 1 ))",
    "echo $(echo $(true && rm -rf /))",
    'DIR="$( cd "$(rm -rf ~)" && pwd )"',
    "echo $(sleep 1 & rm -rf ~)",
    "echo $(false || rm -rf /)",
    'echo "$( (cd /; rm -rf *) && true)"',
    "a=( $(true && rm -rf /) )",
    "f() { echo $(true && rm -rf /); }; f",
    "[[ -n $(true && rm -rf /) ]]",
    "case $(true && rm -rf /) in a) ls;; esac",
    "cat <(true && rm -rf /tmp/../etc)",
    "for f in $(true && rm -rf /); do :; done",
]

FAIL_CLOSED = [
    "echo $(a && b",  # bash rejects it too
]

UNREADABLE = [  # valid bash the lift cannot rewrite: asked (GUARD-002), never allowed
    "echo ${x:-$(a && b)}",  # placeholder inside ${..}: never analysed
    "echo `echo $(a && b)`",  # backtick bodies are not lifted
    f"echo {MARK}0",  # a forged placeholder name
    f"echo $({MARK}0)",
]


@pytest.mark.parametrize("command", ALLOW)
def test_idioms_allow(command: str) -> None:
    v = judge(command)
    assert v.decision == "allow", (command, v.reason)


@pytest.mark.parametrize("command", DENY)
def test_payloads_inside_deny(command: str) -> None:
    v = judge(command)
    assert v.decision == "deny" and "GUARD-FAIL" not in v.rules, (command, v.reason)


@pytest.mark.parametrize("command", FAIL_CLOSED)
def test_unliftable_fail_closed(command: str) -> None:
    v = judge(command)
    assert v.decision == "deny" and v.rules == ["GUARD-FAIL"], (command, v.reason)


@pytest.mark.parametrize("command", UNREADABLE)
def test_unliftable_but_valid_asks(command: str) -> None:
    v = judge(command)
    assert v.decision == "ask" and v.rules == ["GUARD-002"], (command, v.reason)


def test_quotes_in_arithmetic_still_find_the_substitution() -> None:
    v = judge('echo $(( "$(rm -rf /)" ))')
    assert v.decision == "deny" and "FS-001" in v.rules and "GUARD-002" in v.rules, v.reason


@pytest.mark.parametrize("command", [
    "$(echo rm && true) -rf x", '"$(command -v python3 || command -v python)" x.py',
    "$(( $(id -u) )) x", "echo $(a && b) | bash", 'eval "$(a && b)"', 'bash -c "$(a || b)"',
])
def test_computed_names_ask_at_least(command: str) -> None:
    assert judge(command).decision != "allow", command


def test_unknown_output_and_writes() -> None:
    assert judge("echo hi > $(true && echo /etc/passwd)").decision != "allow"
    assert judge("{ ls; } > $(true && echo /etc/x)").decision != "allow"
    assert judge("rm -rf $(ls && pwd)").decision != "allow"


def test_rewrite_holds_bodies_verbatim() -> None:
    out, held = rewrite('D="$( cd "$(dirname "$0")" && pwd )"')
    assert out == f'D="$({MARK}0)"'
    assert held == {f"{MARK}0": [' cd "$(dirname "$0")" && pwd ']}
    out, held = rewrite("echo $(( $(a) + `b` )) $(c; d)")
    assert out == f"echo $({MARK}0) $(c; d)" and held == {f"{MARK}0": ["a", "b"]}
    assert rewrite("echo $(ls; pwd) && ls") == ("echo $(ls; pwd) && ls", {})


def test_nested_lift_keeps_only_outer() -> None:
    out, held = rewrite("echo $(a $(b && c) && d)")
    assert list(held.values()) == [["a $(b && c) && d"]] and out.count(MARK) == 1


def test_lifted_bodies_run_with_their_cwd() -> None:
    simples, _ = parse_line("cd /srv && x=$(ls && pwd)", {}, "/home/u", "/home/u", lambda _b: None)
    last = simples[-1]
    assert last.cwd == "/srv" and last.payloads == ["ls && pwd"]


def test_depth_limit_applies_to_lifted_bodies() -> None:
    from tether.guardian import GuardianConfig

    deep = "echo " + "$(true && echo " * 4 + "ls" + ")" * 4
    assert judge(deep).decision == "allow"
    v = judge(deep, config=GuardianConfig(max_depth=2))
    assert v.rules == ["GUARD-FAIL"] and "max_depth" in v.reason
