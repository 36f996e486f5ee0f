"""Bash semantics evaluated on literal values: IFS, namerefs, printf -v, read/mapfile,
${!x}, parameter expansion operators, set --/"$@", eval. Unknown values ask."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.guardian.guard_helpers import judge
from tether.guardian.params import braced, ifs_split
from tether.guardian.words import UNKNOWN, expand_word

DENY = [
    "IFS=,; c=rm,-rf,/; $c",
    "IFS=:; c=rm:-rf:/home; $c",
    "IFS=_ ; cmd=rm_-rf_/ ; $cmd",
    "declare -n r=x; x='rm -rf /'; $r",
    "local -n r=x; r='rm -rf /'; $x",
    "typeset -n r=c; c='rm -rf /'; eval \"$r\"",
    "printf -v c 'rm -rf /'; $c",
    "printf -v c '%s %s %s' rm -rf /; $c",
    "printf -v c '\\x72\\x6d -rf /'; $c",
    "read c <<< 'rm -rf /'; $c",
    "read -r a b c <<< 'rm -rf /'; $a $b $c",
    "IFS=, read -r a b c <<< 'rm,-rf,/'; $a $b $c",
    "read -a arr <<< 'rm -rf /'; \"${arr[@]}\"",
    "mapfile -t lines <<< 'rm -rf /'; ${lines[0]}",
    "readarray -t L <<'EOF'\nrm -rf /\nEOF\n${L[0]}",
    "x=c; c='rm -rf /'; ${!x}",
    "a1='rm -rf /'; for v in ${!a*}; do ${!v}; done",
    "x='rm -rf /tmp/foo'; ${x/\\/tmp\\/foo//}",
    "x='RM -RF /'; ${x,,}",
    "x='xxrm -rf /'; ${x:2}",
    "x='rm -rf /home/tether/project/build'; ${x%/project/build}",
    "x='echo -rf /'; ${x/echo/rm}",
    "a=(echo -rf /); \"${a[@]/#echo/rm}\"",
    "set -- rm -rf /; \"$@\"",
    "set -- rm -rf /; $1 $2 $3",
    "set -- x rm -rf /; shift; \"$@\"",
    "set -- rm -rf /; $*",
    "x='rm -rf /'; eval \"$x\"",
    "declare c='rm -rf /'; $c",
    "export c='rm -rf /home'; $c",
    "x='xrm -rf /'; ${x:$((0+1))}",
    "rm -rf ${HOME:0:1}",
    "x='$(rm -rf /)'; echo ${x@P}",
    "echo 'ez -es /' | tr 'a-z' 'n-za-m' | sh",
    "echo 'rxm -rf /' | tr -d x | sh",
    "cat /???/s?ad??",
    "/???/?at /e??/sh*",
    "echo key >> ~/.ssh/authorized_k*",
]
ASK = [  # values known only at run time
    "read c < /tmp/cmd; $c",
    "echo 'rm -rf /' | read c; $c",
    "\"$@\"",
    "shift; \"$@\"",
    "IFS=$1; c=rm,-rf,/; $c",
    "declare -n r=$1; $r",
    "f(){ rm -rf \"$1\"; }; set -- x; f /",
    "x=$(cat f); ${x^^}",
    "x='xrm -rf /'; ${x:$((n+1))}",
    "echo ${PS1@P}",
]
ALLOW = [
    "IFS=, read -r name version <<< 'pkg,1.2'; echo \"$name $version\"",
    "IFS=,; c=ls,-la; $c",
    "printf -v msg 'built %s' ok; echo \"$msg\"",
    "set -- build dist; rm -rf \"$@\"",
    "set -euo pipefail; make test",
    "x=hello; echo ${x^^} ${x:1:2} ${x/l/L} ${#x}",
    "name=foo.tar.gz; echo ${name%%.*} ${name#*.}",
    "declare -n r=VERSION; VERSION=1; echo $r",
    "read c <<< 'ls -la'; $c",
    "arr=(a b c); echo \"${arr[@]:1}\"",
    "eval \"$(ssh-agent -s)\"",
    "eval \"$(pyenv init -)\"",
    "for i in 1 2 3; do mkdir -p run_$((i*2)); done",
    "echo $((1+2)) $((7/2)) $((-7%3))",
    "echo hello | tr a-z A-Z",
    "ls /etc/*",
    "cat /etc/*.conf",
    "grep -r foo /etc/*",
]


@pytest.mark.parametrize("command", DENY)
def test_literal_values_are_evaluated(command: str) -> None:
    v = judge(command)
    assert v.decision == "deny" and "GUARD-FAIL" not in v.rules, (command, v.rules, v.decoded)


@pytest.mark.parametrize("command", ASK)
def test_unknown_values_are_never_allowed(command: str) -> None:
    assert judge(command).decision != "allow", command


@pytest.mark.parametrize("command", ALLOW)
def test_ordinary_uses_stay_allowed(command: str) -> None:
    v = judge(command)
    assert v.decision == "allow", (command, v.rules, v.reason)


def test_parameter_operators() -> None:
    env = {"x": "a/b/c.tar.gz", "u": "Hello"}
    same = lambda t: t  # noqa: E731 - the text of a pattern, as written
    assert braced("x##*/", env, same) == "c.tar.gz"
    assert braced("x%.*", env, same) == "a/b/c.tar"
    assert braced("x%%.*", env, same) == "a/b/c"
    assert braced("x//\\//-", env, lambda t: t.replace("\\/", "/")) == "a-b-c.tar.gz"
    assert braced("u^^", env, same) == "HELLO" and braced("u,", env, same) == "hello"
    assert braced("u:1:3", env, same) == "ell" and braced("u: -2", env, same) == "lo"
    assert braced("#u", env, same) == "5"
    assert braced("nope:-dflt", env, same) == "dflt" and braced("u:+alt", env, same) == "alt"
    assert braced("u@Q", env, same) == UNKNOWN and braced("nope", env, same) == UNKNOWN
    assert braced("u:$n", env, same) == UNKNOWN


def test_ifs_split() -> None:
    assert ifs_split("rm,-rf,/", ",") == (["rm", "-rf", "/"], False, False)
    assert ifs_split("a,,b", ",")[0] == ["a", "", "b"]
    assert ifs_split(" a  b ", " \t\n") == (["a", "b"], True, True)
    assert ifs_split("abc", ",") is None
    assert expand_word("$c", {"IFS": ",", "c": "rm,-rf,/"}, "/h") == ["rm", "-rf", "/"]
    assert expand_word('"$c"', {"IFS": ",", "c": "rm,-rf,/"}, "/h") == ["rm,-rf,/"]


_LETTERS = st.text(alphabet="abcXYZ/.-_ ", min_size=0, max_size=12)


@settings(max_examples=200, deadline=None)
@given(_LETTERS, st.sampled_from(["#", "##", "%", "%%"]), st.text(alphabet="ab*?./", max_size=4))
def test_trim_matches_bash_semantics(value: str, op: str, pattern: str) -> None:
    import fnmatch

    got = braced(f"v{op}{pattern}", {"v": value}, lambda t: t)
    cuts = range(len(value) + 1)
    if op.startswith("#"):
        hits = [k for k in cuts if fnmatch.fnmatchcase(value[:k], pattern)]
        want = value[(max(hits) if op == "##" else min(hits)):] if hits else value
    else:
        hits = [k for k in cuts if fnmatch.fnmatchcase(value[len(value) - k :], pattern)]
        want = value[: len(value) - (max(hits) if op == "%%" else min(hits))] if hits else value
    assert got == want


# -- fuzz: a deny payload hidden behind one of these techniques is never allowed -----------------
# {c}: the command, {C}: upper-cased, {i}: words joined by commas, {x}: first "rm" as XX, {v}: a name
_TECHNIQUES = [
    "IFS=,; {v}={i}; ${v}", "printf -v {v} '%s' '{c}'; ${v}", "read -r {v} <<< '{c}'; ${v}",
    "declare -n {v}r={v}; {v}='{c}'; ${v}r", "{v}p={v}; {v}='{c}'; ${{!{v}p}}", "{v}='{C}'; ${{{v},,}}",
    "set -- {c}; \"$@\"", "{v}='{x}'; ${{{v}/XX/rm}}", "{v}='{c}'; eval \"${v}\"",
]


def _hide(technique: str, cmd: str, v: str) -> str:
    return technique.format(c=cmd, C=cmd.upper(), i=",".join(cmd.split()), x=cmd.replace("rm", "XX", 1), v=v)


_PAYLOADS = ["rm -rf /", "rm -rf /home", "chmod u+s /bin/bash", "mkfs.ext4 /dev/sda1", "shutdown -h now"]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(_PAYLOADS), st.sampled_from(_TECHNIQUES), st.sampled_from(["c", "cmd", "x1"]),
       st.sampled_from(["", "true; ", "cd /tmp && ", "export A=1; "]))
def test_fuzz_hidden_payload_never_allowed(payload: str, technique: str, var: str, prefix: str) -> None:
    command = prefix + _hide(technique, payload, var)
    assert judge(command).decision != "allow", command
