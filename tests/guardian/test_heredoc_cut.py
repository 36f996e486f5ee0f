"""Lines with heredocs that bashlex cannot parse as they stand (`guardian.heredocs`)."""

from __future__ import annotations

import pytest

from tests.guardian.guard_helpers import judge
from tether.guardian import heredocs

ALLOW = [
    'cat > run.sh <<EOF\nDIR=\\$(dirname "\\$0")\necho "\\$DIR"\nEOF',
    "case $x in a) ls ;; esac; cat <<'EOF'\nhi\nEOF",
    "[[ -f a ]] && cat <<'EOF' > b\nhi\nEOF",
    "[[ -n $CI ]] && cat > notes.rst <<'EOF'\nThe ``foo`` role doesn't `bar` it's\n$(not run)\nEOF",
    "cat <<EOF\n$(ls && pwd)\nEOF",
    "x=$(ls && pwd) cat <<EOF\nhi\nEOF",
    "a=(1 2); cat <<EOF > out.txt\n${a[@]} $(git rev-parse HEAD)\nEOF",
    "if [[ -d src ]]; then cat >> src/mod.py <<'PY'\n    return `x`\nPY\nfi",
    "[[ -f a ]] && cat <<-EOF > b\n\tindented\n\tEOF",
    "gh pr create --title 'Fix' --body \"$(cat <<'EOF'\n## Summary\n- don't crash\n- `foo()` handles None\nEOF\n)\"",
    "git commit -m \"$(cat <<EOF\nFix: it's the parser\nEOF\n)\"",
    'echo "a" <<EOF\n$(ls && pwd)\nEOF',
]

DENY = [
    "[[ -f a ]] && cat <<EOF > b\n$(rm -rf /)\nEOF",
    "[[ -f a ]] && cat <<EOF > b\n`rm -rf /`\nEOF",
    "[[ -f a ]] && cat <<EOF > b\n${x:-$(rm -rf /)}\nEOF",
    "[[ -f a ]] && cat <<'EOF'\nx\nEOF\nrm -rf /",
    "[[ -f a ]] && bash <<'EOF'\nrm -rf /\nEOF",
    "[[ -f a ]] && x=$(cat <<'EOF'\nhi\nEOF\n) && rm -rf /",
    "[[ -f a ]] && cat <<EOF > /etc/passwd\nx\nEOF",
    "x=$(rm -rf / && pwd) cat <<EOF\nhi\nEOF",
    "cat > run.sh <<EOF\n\\$(ls) $(rm -rf ~)\nEOF",
    "gh pr create --title x --body \"$(cat <<EOF\n$(rm -rf /)\nEOF\n)\"",
    "git commit -m \"$(cat <<EOF\nmsg `rm -rf ~`\nEOF\n)\"",
]


@pytest.mark.parametrize("command", ALLOW)
def test_valid_heredoc_lines_are_read(command: str) -> None:
    v = judge(command, workspace="/app")
    assert v.decision == "allow", (command, v.reason)


@pytest.mark.parametrize("command", DENY)
def test_what_runs_around_or_inside_a_heredoc_is_still_judged(command: str) -> None:
    v = judge(command, workspace="/app")
    assert v.decision == "deny" and "GUARD-FAIL" not in v.rules, (command, v.reason)


@pytest.mark.parametrize("text", [
    '[[ -f a ]] && echo "<<EOF"\nrm -rf /\nEOF',  # `<<` inside double quotes: not sure
    "[[ -f a ]] && echo `cat <<EOF`\nrm -rf /\nEOF",  # inside backticks
    "(( x << 2 ))\nrm -rf /\n2",  # arithmetic shift (bash runs the rm)
    "[[ -f a ]] && echo $(( 1 << 2 ))\nrm -rf /\n2",
    "[[ -f a ]] && cat <<EOF\nno end",  # unterminated body
    f"[[ -f a ]] && cat <{heredocs.MARK}0 <<EOF\nx\nEOF",  # the marker name in the input
    "x=$(case a in a) cat <<EOF ;; esac)\nrm -rf /\nEOF",
])
def test_cut_refuses_what_it_is_not_sure_of(text: str) -> None:
    assert heredocs.cut(text) is None
    assert judge(text, workspace="/app").decision != "allow"


def test_arithmetic_shifts_are_not_heredocs() -> None:
    for command in ("(( x << 2 ))\nrm -rf /\n2", "for (( i = 1 << 2; i; i-- )); do :; done\nrm -rf /\n2"):
        assert judge(command, workspace="/app").decision == "deny", command
    v = judge("cat > s.sh <<'EOF'\n(( y = x << 2 ))\nEOF", workspace="/app")
    assert v.decision == "allow", v.reason


def test_cut_keeps_the_body_and_its_substitutions() -> None:
    text, bodies = heredocs.cut("cat <<EOF > f && ls\na \\$(x) $(date) `id`\nEOF\necho done")  # type: ignore[misc]
    assert text == f"cat <{heredocs.MARK}0 > f && ls\necho done"
    assert bodies[0].text == "a \\$(x) $(date) `id`" and not bodies[0].quoted
    assert bodies[0].substitutions == ["$(date)", "`id`"]
