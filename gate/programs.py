"""Which programs are checkers, judged on one parsed simple command.

Parts: the kinds (`Kind`, `COUNTING`), the tables of test runners,
interpreters, wrappers and trivial programs, word helpers over bashlex
nodes, and `judge_program(words)`: the kind of one simple command (test
runner or test script, an explicit expectation, a plain run, trivial,
masked, none), why, and the files it runs or compares. gate.checks
decides which simple commands carry a line's exit status.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any, Literal

Kind = Literal["test", "expect", "run", "trivial", "masked", "none"]
COUNTING: frozenset[str] = frozenset({"test", "expect"})
"""Kinds that verify behaviour: a test runner or test script, or an explicit expectation."""

RUNNERS = frozenset(
    {"pytest", "py.test", "tox", "nox", "jest", "vitest", "mocha", "ctest", "prove", "bats", "phpunit", "rspec"}
)
SUBCOMMAND_RUNNERS = {
    "make": {"test", "check", "tests"}, "npm": {"test", "t"}, "yarn": {"test"}, "pnpm": {"test"},
    "cargo": {"test"}, "go": {"test"}, "dotnet": {"test"}, "mvn": {"test", "verify"}, "gradle": {"test", "check"},
}
PY_TEST_MODULES = frozenset({"pytest", "unittest", "doctest"})
SYNTAX_ONLY = {
    "bash": {"-n"},
    "sh": {"-n"},
    "dash": {"-n"},
    "zsh": {"-n"},
    "node": {"--check", "-c"},
    "perl": {"-c"},
    "ruby": {"-c"},
}
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
CODE_EXT = re.compile(
    r"\.(py|sh|bash|js|mjs|cjs|ts|tsx|jsx|rb|pl|php|go|rs|c|h|cc|cpp|hpp|java|kt|lua|r|swift|cs)$", re.I
)
TRIVIAL_PATTERNS = frozenset(
    {"", ".", "^", "$", ".*", "^.*", ".*$", "^.*$", "^$", ".+", "\\w", "[a-z]", "[[:print:]]", "x*"}
)
BINARY_TESTS = frozenset({"=", "==", "!=", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "=~", "<", ">"})
NO_RUN_FLAGS = frozenset(
    {
        "--co",
        "--collect-only",
        "--setup-plan",
        "--fixtures",
        "--markers",
        "--version",
        "-h",
        "--help",
        "--no-run",
        "--dry-run",
        "--just-print",
        "--listTests",
        "--list",
        "--list-tests",
    }
)
"""Options under which a test runner runs no test (collection, dry runs, help)."""
SYSTEM_DIRS = ("/usr/", "/bin/", "/sbin/")
def _word_text(node: Any) -> str:
    return str(getattr(node, "word", ""))


def _dynamic(node: Any) -> bool:
    """Whether a word expands a command substitution or a variable (its value is computed)."""
    return any(
        getattr(p, "kind", "") in ("commandsubstitution", "parameter", "processsubstitution")
        for p in getattr(node, "parts", []) or []
    )


def _runs_program(node: Any) -> bool:
    return any(
        getattr(p, "kind", "") in ("commandsubstitution", "processsubstitution")
        for p in getattr(node, "parts", []) or []
    )


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
            while i < len(words) and (
                _word_text(words[i]).startswith("-")
                or _word_text(words[i])[:1].isdigit()
                or "=" in _word_text(words[i])
                and _word_text(words[i]).split("=", 1)[0].isidentifier()
            ):
                i += 1
        else:
            break
    return words[i:]


def judge_program(words: list[Any], pipefail: bool) -> tuple[Kind, str, list[str]]:
    """Kind of one simple command, why, and the files it runs."""
    words = _strip(words)
    if not words:
        return "none", "no program", []
    argv = [_word_text(w) for w in words]
    name = posixpath.basename(argv[0])
    rest = argv[1:]
    if (
        "/" in argv[0]
        and not argv[0].startswith(SYSTEM_DIRS)
        and (
            name in RUNNERS
            or name in SUBCOMMAND_RUNNERS
            or name in SHELLS
            or name in INTERPRETERS
            or name in ("test", "[", "grep", "diff", "cmp")
        )
    ):
        return "masked", f"{argv[0]} is a local copy, not the system's `{name}`", []
    opts = [a for a in rest if a.startswith("-")]
    operands = [a for a in rest if not a.startswith("-")]
    if name in MAY_NOT_RUN:
        return "masked", f"`{name}` may never run its command (no input, no match)", []
    dry = [a for a in opts if a in NO_RUN_FLAGS or (name == "make" and re.fullmatch(r"-[a-zA-Z]*n[a-zA-Z]*", a))]
    if dry and (name in RUNNERS or name in SUBCOMMAND_RUNNERS or (name.startswith("python") and "-m" in rest)):
        return "trivial", f"`{name} {dry[0]}` lists or builds the tests without running them", []
    if name in RUNNERS:
        return "test", f"test runner `{name}`", [a for a in operands if "/" in a or "." in a]
    if name in SUBCOMMAND_RUNNERS:
        if (
            operands[:1]
            and operands[0] in SUBCOMMAND_RUNNERS[name]
            or (name in ("npm", "pnpm", "yarn") and operands[:2] == ["run", "test"])
        ):
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
    if (
        any(a in SYNTAX_ONLY.get(base, set()) for a in rest if a.startswith("-"))
        and "-c" not in rest[:1]
        or (base in SHELLS and "-n" in rest)
    ):
        return "trivial", f"`{name} {' '.join(a for a in rest if a.startswith('-'))}` only checks syntax", []
    if base.startswith("python") and "-m" in rest:
        mod = rest[rest.index("-m") + 1] if rest.index("-m") + 1 < len(rest) else ""
        if mod in PY_TEST_MODULES:
            args = [a for a in rest[rest.index("-m") + 2:] if not a.startswith("-")]
            return (
                "test",
                f"`python -m {mod}`",
                [a.replace(".", "/") + ".py" if "/" not in a and not a.endswith(".py") else a for a in args],
            )
        if LINT_OR_COMPILE.match(mod):
            return "trivial", f"`python -m {mod}` only checks syntax or style", []
        return "run", f"`python -m {mod}` is not a test runner", []
    code_flag = "-c" if base in SHELLS or base.startswith("python") else "-e"
    if code_flag in rest:
        i = rest.index(code_flag)
        code = rest[i + 1] if i + 1 < len(rest) else ""
        if base in SHELLS:
            from tether.gate.checks import classify  # a `bash -c` payload is a line of its own

            inner = classify(code)
            return inner.kind, f"`{name} -c`: {inner.reason}", inner.scripts
        from tether.gate.checks import has_expectation

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
