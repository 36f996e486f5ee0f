"""What counts as a check: decided on the parsed command, never on its text.

Parts: `CheckClass` (the verdict on one command line), `classify(command,
pipefail=)`, and `empty_test_run(output)`. A command is a check only when the
exit status of the whole line is a checker's: the simple commands that
*carry* the line's status are found on the bashlex tree (`a; b` carries b,
`a && b` both, `a || b`, `&`, `!`, `if`, loops and `xargs` none, a pipeline
its last part unless pipefail is on), and one of them must be a test runner,
a test script, or a comparison against an explicit expectation. Existence,
identity and syntax-only checks (`test -e f`, `grep -q . f`, `diff f f`,
`sha256sum f`, `git diff`, `bash -n`, `[ -n "$(bash f)" ]`, `echo PASS`)
never count. A line that defines functions or aliases counts for nothing. A
red-phase confirmation (`pytest; test $? -ne 0`, `rc=$?; [ $rc != 0 ]`,
`pytest | grep -q FAILED`: the TDD habit of watching a new test fail) passes
only while the code is still broken, so it is never an end check; a program's
own failure checked that way (`bash greet.sh --bad; [ $? -ne 0 ]`) still is.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from tether.gate.programs import (
    COUNTING,
    Kind,
    _word_text,
    judge_program,
)
from tether.guardian.bashlex_load import bashlex
from tether.guardian.constructs import rewrite

__all__ = ["COUNTING", "CheckClass", "Kind", "classify", "empty_test_run", "has_expectation"]

_RANK = {"test": 5, "expect": 4, "run": 3, "trivial": 2, "masked": 1, "none": 0}

UNSAFE_BUILTINS = frozenset({"alias", "enable", "trap", "shopt", "hash"})
LOOKUP_VARS = re.compile(
    r"^(PATH|BASH_ENV|ENV|LD_PRELOAD|LD_LIBRARY_PATH|PYTHONSTARTUP|PYTHONHOME|NODE_OPTIONS|PERL5OPT|RUBYOPT|BASH_FUNC_\w+|"
    r"PYTHONPATH|PYTHONUSERBASE|PYTHONSAFEPATH|NODE_PATH|RUBYLIB|PERL5LIB|PERLLIB|CLASSPATH)(\+?=|$)"
)
"""Variables that change which program a name runs, or what it loads first (import paths included)."""
STATUS_ASSIGN = re.compile(r"^([A-Za-z_]\w*)=\$\{?\?\}?$")
FAILURE_WORDS = re.compile(r"(?i)fail|error|traceback|exception|assert|not ok|\bred\b")
ARITH_STATUS = re.compile(r"^\s*(\$\{?\??\w*\}?)\s*(==|!=|<=|>=|<|>)\s*(\d+)\s*$")
_NUMERIC = {"-eq": int.__eq__, "-ne": int.__ne__, "-lt": int.__lt__, "-le": int.__le__, "-gt": int.__gt__,
            "-ge": int.__ge__, "==": int.__eq__, "!=": int.__ne__, "<": int.__lt__, "<=": int.__le__,
            ">": int.__gt__, ">=": int.__ge__, "=": int.__eq__}
SAME_PATH = re.compile(r"^PYTHONPATH=(\.|\./|\$PWD|\$\{PWD\}|\$\(pwd\))?$")
"""PYTHONPATH=. adds only the workspace's top, where `python -m` and pytest import from anyway."""
EMPTY_RUN = re.compile(
    r"\bRan 0 tests?\b|\bNO TESTS RAN\b|\bno tests ran\b|\bcollected 0 items\b|\bNo tests found\b|"
    r"\bno test files\b|\bno tests to run\b|^1\.\.0$|\b0 tests?,? (passed|run)\b|\bTests:\s+0 total\b|\b0 "
    r"passed\b(?!.*\b[1-9]\d* (passed|failed))",
    re.I | re.M,
)


@dataclass
class CheckClass:
    """The verdict on one command line as a check."""

    kind: Kind
    reason: str
    scripts: list[str] = field(default_factory=list)
    """Files the carrying checker runs (test scripts, test modules, test paths)."""
    words: list[str] = field(default_factory=list)
    """Every literal word of the line, to see which files it names."""
    compared: list[str] = field(default_factory=list)
    """Files a diff/cmp compares with each other (no program output involved)."""

    @property
    def counts(self) -> bool:
        return self.kind in COUNTING


def empty_test_run(output: str) -> bool:
    """A test runner's output saying it ran nothing ("Ran 0 tests", "collected 0 items", ...)."""
    return EMPTY_RUN.search(output) is not None


@dataclass
class _Simple:
    words: list[Any]
    carries: bool


class _Walk:
    """Collects simple commands with whether each carries the line's exit status."""

    def __init__(self, pipefail: bool) -> None:
        self.pipefail = pipefail
        self.simples: list[_Simple] = []
        self.unsafe = ""
        self.errexit = False
        self.status_vars: set[str] = set()
        """Variables the line assigns the last exit status to (`rc=$?`)."""

    def node(self, n: Any, carries: bool) -> None:
        kind = n.kind
        if kind == "list":
            self.list(n.parts, carries)
        elif kind == "pipeline":
            self.pipeline(n.parts, carries)
        elif kind == "compound":
            for p in n.list:
                if p.kind not in ("reservedword", "redirect"):
                    self.node(p, carries)
        elif kind == "command":
            self.command(n, carries)
        elif kind == "function":
            self.unsafe = "the line defines a shell function, which can shadow a checker"
        elif kind in ("if", "for", "while", "until", "case"):
            for p in n.parts:
                if p.kind not in ("reservedword", "operator", "word"):
                    self.node(p, False)
        elif hasattr(n, "parts"):
            for p in n.parts:
                self.node(p, False)

    def list(self, parts: list[Any], carries: bool) -> None:
        """An and-or list: `;`/newline keep only the last, `&&` keeps both, `||` and `&` neither."""
        groups: list[tuple[list[Any], str]] = [([], "")]
        for p in parts:
            if p.kind == "operator" and p.op in (";", "\n", "&"):
                groups[-1] = (groups[-1][0], p.op)
                groups.append(([], ""))
            else:
                groups[-1][0].append(p)
        groups = [g for g in groups if g[0]]
        for i, (items, end) in enumerate(groups):
            last = i == len(groups) - 1
            self.andor(items, carries and end != "&" and (last or self.errexit))

    def andor(self, items: list[Any], carries: bool) -> None:
        ops = [p.op for p in items if p.kind == "operator"]
        cmds = [p for p in items if p.kind != "operator"]
        if "||" in ops:
            failing_exit = [c for c, op in zip(cmds[1:], ops, strict=False) if op == "||" and _is_failing_exit(c)]
            if len(failing_exit) == ops.count("||"):  # `check || exit 1`: the failure still ends the line
                for c in cmds:
                    self.node(c, carries and c not in failing_exit)
                return
            carries = False
        for c in cmds:
            self.node(c, carries)
        if cmds and _sets_errexit(cmds[-1]):
            self.errexit = True

    def pipeline(self, parts: list[Any], carries: bool) -> None:
        if parts and parts[0].kind == "reservedword" and parts[0].word == "!":
            carries = False
            parts = parts[1:]
        cmds = [p for p in parts if p.kind not in ("pipe", "reservedword")]
        for i, c in enumerate(cmds):
            self.node(c, carries and (self.pipefail or i == len(cmds) - 1))

    def command(self, n: Any, carries: bool) -> None:
        words = [p for p in n.parts if p.kind == "word"]
        for p in n.parts:  # substitutions inside words run but never carry the status
            for sub in getattr(p, "parts", []) or []:
                if getattr(sub, "kind", "") in ("commandsubstitution", "processsubstitution"):
                    self.node(sub.command, False)
        if words and posixpath.basename(_word_text(words[0])) in UNSAFE_BUILTINS:
            self.unsafe = f"the line uses `{_word_text(words[0])}`, which can change what a checker name runs"
        argv = [_word_text(w) for w in words]
        assigned = [_word_text(p) for p in n.parts if p.kind == "assignment"]
        if argv[:1] in (["export"], ["declare"], ["typeset"], ["readonly"], ["env"]):
            assigned += argv[1:]
        self.status_vars.update(m.group(1) for a in assigned if (m := STATUS_ASSIGN.match(a)))
        bad = [a for a in assigned if LOOKUP_VARS.match(a) and not SAME_PATH.match(a)]
        if bad:
            self.unsafe = f"the line sets {bad[0].split('=')[0]}, which changes what a checker name runs"
        if (
            argv[:1] == ["set"]
            and any(a.startswith("+") and ("o" in a or "e" in a) for a in argv[1:])
            and "pipefail" in argv
        ):
            self.pipefail = False
        self.simples.append(_Simple(words, carries))


def _is_failing_exit(node: Any) -> bool:
    if node.kind != "command":
        return False
    argv = [_word_text(p) for p in node.parts if p.kind == "word"]
    return argv[:1] == ["false"] or (
        argv[:1] in (["exit"], ["return"]) and len(argv) == 2 and argv[1].isdigit() and argv[1] != "0"
    )


def _sets_errexit(node: Any) -> bool:
    if node.kind != "command":
        return False
    argv = [_word_text(p) for p in node.parts if p.kind == "word"]
    return argv[:1] == ["set"] and any(
        a == "-e" or (a.startswith("-") and "e" in a and not a.startswith("--")) or a == "errexit" for a in argv[1:]
    )


ASSERTION = re.compile(
    r"\bassert\w*\s*\(?(?P<expr>[^\n]*)|\bexpect\s*\((?P<js>[^\n]*)|sys\.exit\(\s*[^0)\s][^\n]*|process\.exit\(\s*[^0)\s][^\n]*|\braise\b[^\n]*"
    r"|\bt\.(Error|Errorf|Fatal|Fatalf|Fail)\w*\([^\n]*|\bpanic!?\([^\n]*"
)
SHELL_COMPARISON = re.compile(
    r"\[\[?\s[^\]\n]*\$[^\]\n]*\s(=|==|!=|-eq|-ne|-lt|-gt|-le|-ge)\s|\bgrep\s+(-\w+\s+)*['\"]?\w\w|\bassert_\w+|\bdiff\b|\bcmp\b"
)
SHELL_SHADOWING = re.compile(r"^\s*(function\s+)?[\w.-]+\s*\(\)\s*\{|^\s*(alias|trap)\s", re.M)
COMPUTED = re.compile(r"[A-Za-z_][\w.]*\s*\(|[A-Za-z_]\w*\.[A-Za-z_]|\$\(|\$\w|\bin\b|\[")
"""An expression that computes something: a call, an attribute, a substitution, a lookup."""


def has_expectation(text: str, path: str = "") -> bool:
    """Whether a test's text checks something computed (not `assert True`, `assertTrue(True)`, `echo PASS`).

    Shell tests must hold a real check among their commands; other languages
    an assertion (assert*, expect(), a non-zero exit, raise) over a call,
    attribute or variable.
    """
    shell = path.endswith((".sh", ".bash", ".bats")) or text.startswith(
        ("#!/bin/sh", "#!/bin/bash", "#!/usr/bin/env bash")
    )
    if shell:
        try:
            trees = bashlex.parse(rewrite(text))
        except Exception:  # bats syntax, heredocs, ...: look for a comparison in the text instead
            return SHELL_COMPARISON.search(text) is not None and not SHELL_SHADOWING.search(text)
        walk = _Walk(pipefail=False)
        for tree in trees:
            walk.node(tree, True)
        return not walk.unsafe and any(judge_program(s.words, False)[0] in COUNTING for s in walk.simples)
    for m in ASSERTION.finditer(text):
        expr = m.group("expr") or m.group("js") or m.group(0)
        if COMPUTED.search(expr):
            return True
    return False


def _is_status(node: Any, status_vars: set[str]) -> bool:
    """A word that is nothing but the last exit status (`$?`, `"${?}"`, `$rc` after `rc=$?`)."""
    params = [p for p in getattr(node, "parts", []) or [] if getattr(p, "kind", "") == "parameter"]
    text = _word_text(node).strip()
    return (
        len(params) == 1
        and (params[0].value == "?" or params[0].value in status_vars)
        and text in (f"${params[0].value}", f"${{{params[0].value}}}")
    )


def _fails_on_zero(op: str, status_left: bool, other: str) -> bool:
    """Whether `status OP other` (or `other OP status`) is false for status 0: it asserts a failure."""
    if op not in _NUMERIC or not other.lstrip("-").isdigit():
        return False
    a, b = (0, int(other)) if status_left else (int(other), 0)
    return not _NUMERIC[op](a, b)


def _red_phase(walk: _Walk) -> str:
    """Why the line is a red-phase confirmation (it passes only if the test before it failed), or "".

    Only a test runner or test script's failure is a red phase: `bash greet.sh --bad; [ $? -ne 0 ]` checks that
    a program rejects bad input, which must still hold at the end.
    """
    tests = [s for s in walk.simples if s.words and judge_program(s.words, False)[0] == "test"]
    carrying = [s for s in walk.simples if s.carries and s.words and s not in tests] if tests else []
    for s in carrying:
        argv = [_word_text(w) for w in s.words]
        name = posixpath.basename(argv[0])
        if name in ("test", "[", "[["):
            words = [w for w in s.words[1:] if _word_text(w) not in ("]", "]]")]
            for i in range(1, len(words) - 1):
                op, left, right = _word_text(words[i]), words[i - 1], words[i + 1]
                if _is_status(left, walk.status_vars) and _fails_on_zero(op, True, _word_text(right)):
                    return f"`{' '.join(argv)}` passes only when the command before it failed"
                if _is_status(right, walk.status_vars) and _fails_on_zero(op, False, _word_text(left)):
                    return f"`{' '.join(argv)}` passes only when the command before it failed"
        if name == "((" and len(argv) > 1:
            m = ARITH_STATUS.match(argv[1])
            var = m.group(1).strip("${}") if m else ""
            if m and (var == "?" or var in walk.status_vars) and _fails_on_zero(m.group(2), True, m.group(3)):
                return f"`(( {argv[1].strip()} ))` passes only when the command before it failed"
    for s in carrying:
        if posixpath.basename(_word_text(s.words[0])) in ("grep", "egrep", "fgrep", "rg"):
            pattern = next((_word_text(w) for w in s.words[1:] if not _word_text(w).startswith("-")), "")
            if FAILURE_WORDS.search(pattern) and not re.search(r"\b0 (failed|errors?)\b", pattern):
                return f"`grep {pattern}` in a test's output passes only while the test fails"
    return ""


def classify(command: str, *, pipefail: bool = False) -> CheckClass:
    """Whether `command`'s exit status is a real check's, and of which kind.

    `pipefail` says whether the line runs under `set -o pipefail` (the gate's
    own fresh shell does; the sandbox's ordinary exec does not).
    """
    try:
        trees = bashlex.parse(rewrite(command))
    except Exception as e:  # bashlex raises many kinds; an unparsable line is no check
        return CheckClass("none", f"cannot be parsed ({type(e).__name__})")
    walk = _Walk(pipefail)
    for i, tree in enumerate(trees):
        walk.node(tree, i == len(trees) - 1)
    words = [_word_text(w) for s in walk.simples for w in s.words]
    if walk.unsafe:
        return CheckClass("masked", walk.unsafe, words=words)
    red = _red_phase(walk)
    if red:
        return CheckClass("none", f"a red-phase confirmation, never an end check: {red}", words=words)
    best: tuple[Kind, str, list[str]] = ("none", "runs no checker", [])
    masked_best: tuple[Kind, str, list[str]] | None = None
    for s in walk.simples:
        kind, why, scripts = judge_program(s.words, walk.pipefail)
        if not s.carries:
            if kind in COUNTING and masked_best is None:
                masked_best = (
                    "masked",
                    f"{why}, but its exit status is not the line's (||, ;, &, !, if, a pipe without pipefail)",
                    scripts,
                )
            continue
        if _RANK[kind] > _RANK[best[0]]:
            best = (kind, why, scripts)
    if best[0] not in COUNTING and masked_best is not None:
        best = masked_best
    scripts = [s for s in best[2] if not s.startswith("=")]
    compared = [s[1:] for s in best[2] if s.startswith("=")]
    return CheckClass(best[0], best[1], scripts, words, compared)
