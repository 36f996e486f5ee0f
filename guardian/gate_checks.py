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
never count. A line that defines functions or aliases counts for nothing.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any, Literal

import bashlex

from guardian.constructs import rewrite

Kind = Literal["test", "expect", "run", "trivial", "masked", "none"]
COUNTING: frozenset[str] = frozenset({"test", "expect"})
"""Kinds that verify behaviour: a test runner or test script, or an explicit expectation."""
_RANK = {"test": 5, "expect": 4, "run": 3, "trivial": 2, "masked": 1, "none": 0}

RUNNERS = frozenset({"pytest", "py.test", "tox", "nox", "jest", "vitest", "mocha", "ctest", "prove", "bats", "phpunit", "rspec"})
SUBCOMMAND_RUNNERS = {
    "make": {"test", "check", "tests"}, "npm": {"test", "t"}, "yarn": {"test"}, "pnpm": {"test"},
    "cargo": {"test"}, "go": {"test"}, "dotnet": {"test"}, "mvn": {"test", "verify"}, "gradle": {"test", "check"},
}
PY_TEST_MODULES = frozenset({"pytest", "unittest", "doctest"})
SYNTAX_ONLY = {"bash": {"-n"}, "sh": {"-n"}, "dash": {"-n"}, "zsh": {"-n"}, "node": {"--check", "-c"}, "perl": {"-c"}, "ruby": {"-c"}}
SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh", "busybox"})
INTERPRETERS = frozenset({"python", "python3", "node", "ruby", "perl", "php", "lua", "Rscript", "deno", "bun"})
TRANSPARENT = frozenset({"timeout", "env", "nice", "time", "command", "stdbuf", "ionice", "exec", "nohup"})
MAY_NOT_RUN = frozenset({"xargs", "parallel", "find", "watch"})
"""Programs that run their argument only sometimes (no input, no match): the check may never run."""
TRIVIAL = frozenset({
    "true", ":", "echo", "printf", "ls", "cat", "stat", "file", "wc", "head", "tail", "md5sum", "sha1sum",
    "sha256sum", "sha512sum", "cksum", "b2sum", "git", "exit", "return", "realpath", "readlink", "du", "find",
    "tree", "pwd", "which", "type", "sleep", "touch", "shellcheck", "ruff", "mypy", "flake8", "pylint", "black",
})
LINT_OR_COMPILE = re.compile(r"^(py_compile|compileall|pyflakes|pycodestyle|tabnanny)$")
TEST_NAME = re.compile(
    r"(^|/)(tests?[\w.-]*|[\w.-]*_tests?(\.\w+)?|[\w.-]*\.test\.\w+|[\w.-]*_spec\.\w+|check[\w.-]*|verify[\w.-]*)$"
    r"|(^|/)(tests?|spec|__tests__)/"
)
CODE_EXT = re.compile(r"\.(py|sh|bash|js|mjs|cjs|ts|tsx|jsx|rb|pl|php|go|rs|c|h|cc|cpp|hpp|java|kt|lua|r|swift|cs)$", re.I)
TRIVIAL_PATTERNS = frozenset({"", ".", "^", "$", ".*", "^.*", ".*$", "^.*$", "^$", ".+", "\\w", "[a-z]", "[[:print:]]", "x*"})
BINARY_TESTS = frozenset({"=", "==", "!=", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "=~", "<", ">"})
UNSAFE_BUILTINS = frozenset({"alias", "enable", "trap", "shopt", "hash"})
LOOKUP_VARS = re.compile(r"^(PATH|BASH_ENV|ENV|LD_PRELOAD|LD_LIBRARY_PATH|PYTHONSTARTUP|PYTHONHOME|NODE_OPTIONS|PERL5OPT|RUBYOPT|BASH_FUNC_\w+)(\+?=|$)")
"""Variables that change which program a name runs, or what it loads first."""
SYSTEM_DIRS = ("/usr/", "/bin/", "/sbin/")
EMPTY_RUN = re.compile(
    r"\bRan 0 tests?\b|\bNO TESTS RAN\b|\bno tests ran\b|\bcollected 0 items\b|\bNo tests found\b|"
    r"\bno test files\b|^1\.\.0$|\b0 tests?,? (passed|run)\b|\bTests:\s+0 total\b",
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


def _word_text(node: Any) -> str:
    return str(getattr(node, "word", ""))


def _dynamic(node: Any) -> bool:
    """Whether a word expands a command substitution or a variable (its value is computed)."""
    return any(getattr(p, "kind", "") in ("commandsubstitution", "parameter", "processsubstitution") for p in getattr(node, "parts", []) or [])


def _runs_program(node: Any) -> bool:
    return any(getattr(p, "kind", "") in ("commandsubstitution", "processsubstitution") for p in getattr(node, "parts", []) or [])


class _Walk:
    """Collects simple commands with whether each carries the line's exit status."""

    def __init__(self, pipefail: bool) -> None:
        self.pipefail = pipefail
        self.simples: list[_Simple] = []
        self.unsafe = ""
        self.errexit = False

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
        bad = [a for a in assigned if LOOKUP_VARS.match(a)]
        if bad:
            self.unsafe = f"the line sets {bad[0].split('=')[0]}, which changes what a checker name runs"
        if argv[:1] == ["set"] and any(a.startswith("+") and ("o" in a or "e" in a) for a in argv[1:]) and "pipefail" in argv:
            self.pipefail = False
        self.simples.append(_Simple(words, carries))


def _is_failing_exit(node: Any) -> bool:
    if node.kind != "command":
        return False
    argv = [_word_text(p) for p in node.parts if p.kind == "word"]
    return argv[:1] == ["false"] or (argv[:1] in (["exit"], ["return"]) and len(argv) == 2 and argv[1].isdigit() and argv[1] != "0")


def _sets_errexit(node: Any) -> bool:
    if node.kind != "command":
        return False
    argv = [_word_text(p) for p in node.parts if p.kind == "word"]
    return argv[:1] == ["set"] and any(a == "-e" or (a.startswith("-") and "e" in a and not a.startswith("--")) or a == "errexit" for a in argv[1:])


def _strip(words: list[Any]) -> list[Any]:
    """Words without wrappers that pass the status through (timeout 5, env X=1, nice -n 5, ...)."""
    i = 0
    while i < len(words):
        w = _word_text(words[i])
        name = posixpath.basename(w)
        if "=" in w and w.split("=", 1)[0].isidentifier():
            i += 1
        elif name in TRANSPARENT:
            i += 1
            while i < len(words) and (_word_text(words[i]).startswith("-") or _word_text(words[i])[:1].isdigit()
                                      or "=" in _word_text(words[i]) and _word_text(words[i]).split("=", 1)[0].isidentifier()):
                i += 1
        else:
            break
    return words[i:]


def _judge(words: list[Any], pipefail: bool) -> tuple[Kind, str, list[str]]:
    """Kind of one simple command, why, and the files it runs."""
    words = _strip(words)
    if not words:
        return "none", "no program", []
    argv = [_word_text(w) for w in words]
    name = posixpath.basename(argv[0])
    rest = argv[1:]
    if "/" in argv[0] and not argv[0].startswith(SYSTEM_DIRS) and (name in RUNNERS or name in SUBCOMMAND_RUNNERS or name in SHELLS
                                                                    or name in INTERPRETERS or name in ("test", "[", "grep", "diff", "cmp")):
        return "masked", f"{argv[0]} is a local copy, not the system's `{name}`", []
    opts = [a for a in rest if a.startswith("-")]
    operands = [a for a in rest if not a.startswith("-")]
    if name in MAY_NOT_RUN:
        return "masked", f"`{name}` may never run its command (no input, no match)", []
    if name in RUNNERS:
        return "test", f"test runner `{name}`", [a for a in operands if "/" in a or "." in a]
    if name in SUBCOMMAND_RUNNERS:
        if operands[:1] and operands[0] in SUBCOMMAND_RUNNERS[name] or (name in ("npm", "pnpm", "yarn") and operands[:2] == ["run", "test"]):
            return "test", f"`{name} {operands[0]}`", []
        return "run", f"`{name}` without a test target", []
    if name in SHELLS or name.startswith(("python", "perl", "ruby", "node")) or name in INTERPRETERS:
        return _interpreter(name, argv, words)
    if TEST_NAME.search(argv[0]) and ("/" in argv[0]):
        return "test", f"test script {argv[0]}", [argv[0]]
    if name in ("test", "[", "[["):
        return _test_expr(words[1:])
    if name in ("grep", "egrep", "fgrep", "rg"):
        return _grep(argv, words)
    if name in ("diff", "cmp"):
        if len(set(operands)) < 2:
            return "trivial", f"`{name}` of a file with itself", []
        return _content_or_program(words[1:], f"`{name}` of two inputs")
    if name.endswith("sum") and "-c" in opts or "--check" in opts:
        return "expect", f"`{name} -c` against recorded sums", []
    if name in TRIVIAL or name == "false":
        return "trivial", f"`{name}` proves nothing about behaviour", []
    if "/" in argv[0]:
        return "run", f"runs {argv[0]} without an expectation", [argv[0]]
    return "none", f"`{name}` is not a checker", []


def _interpreter(name: str, argv: list[str], words: list[Any]) -> tuple[Kind, str, list[str]]:
    base = re.sub(r"[\d.]+$", "", name)
    rest = argv[1:]
    if any(a in SYNTAX_ONLY.get(base, set()) for a in rest if a.startswith("-")) and "-c" not in rest[:1] or (base in SHELLS and "-n" in rest):
        return "trivial", f"`{name} {' '.join(a for a in rest if a.startswith('-'))}` only checks syntax", []
    if base.startswith("python") and "-m" in rest:
        mod = rest[rest.index("-m") + 1] if rest.index("-m") + 1 < len(rest) else ""
        if mod in PY_TEST_MODULES:
            args = [a for a in rest[rest.index("-m") + 2:] if not a.startswith("-")]
            return "test", f"`python -m {mod}`", [a.replace(".", "/") + ".py" if "/" not in a and not a.endswith(".py") else a for a in args]
        if LINT_OR_COMPILE.match(mod):
            return "trivial", f"`python -m {mod}` only checks syntax or style", []
        return "run", f"`python -m {mod}` is not a test runner", []
    code_flag = "-c" if base in SHELLS or base.startswith("python") else "-e"
    if code_flag in rest:
        i = rest.index(code_flag)
        code = rest[i + 1] if i + 1 < len(rest) else ""
        if base in SHELLS:
            inner = classify(code)
            return inner.kind, f"`{name} -c`: {inner.reason}", inner.scripts
        if has_expectation(code, "code.py" if base.startswith("python") else "code.js"):
            return "expect", f"`{name} {code_flag}` code with an assertion on computed values", []
        return "run", f"`{name} {code_flag}` code without a meaningful assertion", []
    scripts = [a for a in rest if not a.startswith("-")]
    if not scripts:
        return "none", f"`{name}` reading stdin", []
    if TEST_NAME.search(scripts[0]):
        return "test", f"test script {scripts[0]}", [scripts[0]]
    return "run", f"runs {scripts[0]} without an expectation", [scripts[0]]


def _test_expr(words: list[Any]) -> tuple[Kind, str, list[str]]:
    words = [w for w in words if _word_text(w) not in ("]", "]]")]
    texts = [_word_text(w) for w in words]
    ops = [i for i, t in enumerate(texts) if t in BINARY_TESTS and 0 < i < len(texts) - 1]
    for i in ops:
        left, right = words[i - 1], words[i + 1]
        lt, rt = texts[i - 1], texts[i + 1]
        if lt == rt and _dynamic(left) == _dynamic(right):
            continue
        if "" in (lt, rt) or lt.strip("\"'") == "" or rt.strip("\"'") == "":
            continue  # comparing with "" is -n/-z in disguise
        if _runs_program(left) or _runs_program(right):
            return "expect", "compares a program's output with an expected value", []
        if _dynamic(left) or _dynamic(right):
            return "expect", "compares a computed value with an expected one", []
    return "trivial", "an existence or emptiness test proves nothing about behaviour", []


def _grep(argv: list[str], words: list[Any]) -> tuple[Kind, str, list[str]]:
    rest = argv[1:]
    pattern, files, i = None, [], 0
    while i < len(rest):
        a = rest[i]
        if a in ("-e", "--regexp") and i + 1 < len(rest):
            pattern = rest[i + 1]
            i += 2
            continue
        if a.startswith("-") and a != "-":
            if "v" in a.lstrip("-") and not a.startswith("--"):
                return "trivial", "`grep -v` succeeds on any other line", []
            i += 1
            continue
        if pattern is None:
            pattern = a
        else:
            files.append(a)
        i += 1
    if pattern is None or pattern.strip() in TRIVIAL_PATTERNS or len(re.findall(r"\w", pattern)) < 2:
        return "trivial", f"`grep` for {pattern!r} matches any content", []
    code = [f for f in files if CODE_EXT.search(f)]
    if code:
        return "trivial", f"`grep` in source {code[0]} reads the code, it does not run it", []
    return "expect", f"`grep` for {pattern!r}", []


def _content_or_program(words: list[Any], what: str) -> tuple[Kind, str, list[str]]:
    texts = [_word_text(w) for w in words if not _word_text(w).startswith("-")]
    if any(_runs_program(w) for w in words):
        return "expect", f"{what}, one a program's output", []
    code = [t for t in texts if CODE_EXT.search(t)]
    if code:
        return "trivial", f"{what}: compares source {code[0]}, does not run it", []
    return "expect", what, ["=" + t for t in texts]


ASSERTION = re.compile(
    r"\bassert\w*\s*\(?(?P<expr>[^\n]*)|\bexpect\s*\((?P<js>[^\n]*)|sys\.exit\(\s*[^0)\s][^\n]*|process\.exit\(\s*[^0)\s][^\n]*|\braise\b[^\n]*"
)
COMPUTED = re.compile(r"[A-Za-z_][\w.]*\s*\(|[A-Za-z_]\w*\.[A-Za-z_]|\$\(|\$\w|\bin\b|\[")
"""An expression that computes something: a call, an attribute, a substitution, a lookup."""


def has_expectation(text: str, path: str = "") -> bool:
    """Whether a test's text checks something computed (not `assert True`, `assertTrue(True)`, `echo PASS`).

    Shell tests must hold a real check among their commands; other languages
    an assertion (assert*, expect(), a non-zero exit, raise) over a call,
    attribute or variable.
    """
    shell = path.endswith((".sh", ".bash", ".bats")) or text.startswith(("#!/bin/sh", "#!/bin/bash", "#!/usr/bin/env bash"))
    if shell:
        try:
            trees = bashlex.parse(rewrite(text))
        except Exception:  # an unparsable script proves nothing
            return False
        walk = _Walk(pipefail=False)
        for tree in trees:
            walk.node(tree, True)
        return not walk.unsafe and any(_judge(s.words, False)[0] in COUNTING for s in walk.simples)
    for m in ASSERTION.finditer(text):
        expr = m.group("expr") or m.group("js") or m.group(0)
        if COMPUTED.search(expr):
            return True
    return False


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
    best: tuple[Kind, str, list[str]] = ("none", "runs no checker", [])
    masked_best: tuple[Kind, str, list[str]] | None = None
    for s in walk.simples:
        kind, why, scripts = _judge(s.words, walk.pipefail)
        if not s.carries:
            if kind in COUNTING and masked_best is None:
                masked_best = ("masked", f"{why}, but its exit status is not the line's (||, ;, &, !, if, a pipe without pipefail)", scripts)
            continue
        if _RANK[kind] > _RANK[best[0]]:
            best = (kind, why, scripts)
    if best[0] not in COUNTING and masked_best is not None:
        best = masked_best
    scripts = [s for s in best[2] if not s.startswith("=")]
    compared = [s[1:] for s in best[2] if s.startswith("=")]
    return CheckClass(best[0], best[1], scripts, words, compared)
