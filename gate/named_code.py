"""Whether each function or option the goal asks for by name is in the code at the end: a goal done halfway.

Parts: `missing_names()`, `untouched_targets()`. "Fix mul(a, b) and add div(a, b)" with only mul
fixed turns mul's test green and leaves div unwritten; a green test is then
proof of half the goal. Every `name(` the goal asks about (not under a
negation, not one it asks to remove, rename or replace) must appear in the
final text of a file the goal names or the run changed, or else of any source
file of the project, test files left out;
so must every `--option` it asks about.
What it cannot see: whether the function does what the goal says (its tests
do), or a part of the goal named in plain words only.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tether.common.manifest import FileState
from tether.common.walk import read_rel
from tether.gate.evidence import is_generated
from tether.gate.goal import negated, strip_urls
from tether.gate.hollow_tests import is_python_test

__all__ = ["missing_names", "untouched_targets"]

MAX_TEXT = 1_000_000
MAX_FILES = 100
_CALL = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\(|(?<![\w-])(--[A-Za-z][\w-]+)")
_GONE = re.compile(r"(?i)\b(remov\w*|delet\w*|drop\w*|replac\w*|renam\w*|deprecat\w*|get rid of|instead of|"
                   r"rather than|in place of|inlin\w*|merg\w*)\b")
_CLAUSE = re.compile(r"[.;:!?](\s|$)|,|\band\b|\bthen\b", re.IGNORECASE)
_TEST_NAME = re.compile(r"(^|/)(tests?/|test_[^/]*$|[^/]*_test\.\w+$|[^/]*\.(test|spec)\.\w+$|[^/]*\.bats$)")
_SOURCE = re.compile(r"\.(py|pyi|js|mjs|cjs|ts|tsx|jsx|sh|bash|c|h|cc|cpp|go|rs|rb|java|kt|php|pl|pm|lua)$")
_NOT_CODE = {"e", "i", "a", "eg", "ie", "etc", "see", "like", "print", "len", "str", "int", "list", "dict", "set",
             "open", "range", "sorted", "json", "main"}


def _asked(goal: str) -> list[str]:
    text = strip_urls(goal)
    spans = negated(text)
    out = []
    for m in _CALL.finditer(text):
        name = m.group(1) or m.group(2)
        at = m.start(1) if m.group(1) else m.start(2)
        if name.lower() in _NOT_CODE or len(name) < 2 or any(a <= at < b for a, b in spans):
            continue
        ends = list(_CLAUSE.finditer(text[:at]))
        clause = text[ends[-1].end():at] if ends else text[:at]
        if _GONE.search(clause) or _GONE.match(text, m.end()) or re.match(r"\s*\)?\s*(with|by)\b", text[m.end():]):
            continue
        out.append(name)
    return list(dict.fromkeys(out))


def missing_names(goal: str, artifacts: list[str], start: dict[str, FileState], end: dict[str, FileState],
                  workspace: Path) -> list[str]:
    """The functions the goal asks for by name (`div(`) found in no file the goal names or the run changed."""
    names = _asked(goal)
    if not names:
        return []
    changed = [r for r in end if not is_generated(r) and (r not in start or start[r].sha256 != end[r].sha256)]
    files = [r for r in dict.fromkeys([*artifacts, *sorted(changed)])
             if r in end and not _TEST_NAME.search(r) and not is_python_test(r)][:MAX_FILES]
    if not files:
        return []
    missing = _absent(names, files, workspace) + _stubs([n for n in names if not n.startswith("-")], files, workspace)
    if missing:  # the fix may live in a file the goal does not name (a helper): any source file of the project will do
        rest = [r for r in sorted(end) if r not in files and not is_generated(r) and not _TEST_NAME.search(r)
                and not is_python_test(r) and _SOURCE.search(r)][:MAX_FILES]
        missing = _absent(missing, rest, workspace)
    return missing


def _stubs(names: list[str], files: list[str], workspace: Path) -> list[str]:
    """The asked functions a Python file the run changed defines only as a stub (`pass`, `...`, `return`, `return
    None`, `raise NotImplementedError`, a docstring): "add div and mod" with `def mod(a, b): return None`."""
    stub, real = set(), set()  # an abstract method beside its implementation is no stub
    for rel in [r for r in files if r.endswith(".py")]:
        try:
            tree = ast.parse((read_rel(workspace, rel, MAX_TEXT) or b"").decode("utf-8", "replace"))
        except (SyntaxError, ValueError):
            continue
        for d in ast.walk(tree):
            if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) and d.name in names:
                (stub if all(_stub(s) for s in d.body) else real).add(d.name)
    return [n for n in names if n in stub and n not in real]


def _stub(node: ast.stmt) -> bool:
    if isinstance(node, ast.Pass) or isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return True  # `pass`, `...`, a docstring
    if isinstance(node, ast.Return):
        return node.value is None or isinstance(node.value, ast.Constant) and node.value.value is None
    if isinstance(node, ast.Raise) and node.exc is not None:
        exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
    return False


def _absent(names: list[str], files: list[str], workspace: Path) -> list[str]:
    text = "\n".join((read_rel(workspace, r, MAX_TEXT) or b"").decode("utf-8", "replace") for r in files)
    return [n for n in names if not re.search(rf"(?<![\w$-]){re.escape(n)}(?![\w$-])", text)]


_EDIT = re.compile(
    r"(?i)\b(document(?:s|ed|ing)?|describ(?:e|es|ed|ing)|mention(?:s|ed|ing)?|explain(?:s|ed|ing)?|"
    r"add(?:s|ed|ing)?|append(?:s|ed|ing)?|updat(?:e|es|ed|ing)|edit(?:s|ed|ing)?|chang(?:e|es|ed|ing)|"
    r"modif(?:y|ies|ied|ying)|fix(?:es|ed|ing)?|extend(?:s|ed|ing)?|writ(?:e|es|ing)|bump(?:s|ed|ing)?|set|put|"
    r"insert(?:s|ed|ing)?)\b"
    r"(?:(?:(?!\b(?:that|which|who|using|uses?|from|with|like|as|by|than)\b)[^.;:!?,]){0,60}?\b(?:in|to|into|inside)\s+"
    r"|\s+(?:the\s+)?)(?:the\s+)?(?:file\s+)?$")
"""An edit verb that governs the file name right after it ("document mul in README.md", "update CHANGELOG.md",
"add a section to docs/usage.md"); "using the helper in utils.py" or "as lib.sh does" is no such ask."""


def untouched_targets(goal: str, artifacts: list[str], start: dict[str, FileState], end: dict[str, FileState]
                      ) -> list[str]:
    """Review lines for files other than code the goal asks to change ("document mul in README.md", "update
    CHANGELOG.md") that existed before the run and are byte for byte as they were: the rest of the work can pass its
    checks while that part was never done."""
    text = strip_urls(goal)
    spans = negated(text)
    out = []
    for rel in artifacts:
        if rel not in start or rel not in end or start[rel].sha256 != end[rel].sha256 or _SOURCE.search(rel):
            continue  # code: a fix may rightly live elsewhere ("fix the crash in app.py" in lib.py); missing_names
        for m in re.finditer(rf"(?<![\w/.-]){re.escape(rel)}(?![\w/-])", text):
            if any(a <= m.start() < b for a, b in spans):
                continue
            ends = list(_CLAUSE.finditer(text[:m.start()]))
            clause = text[ends[-1].end() if ends else 0:m.start()]
            if _EDIT.search(clause) and not _GONE.search(clause):
                out.append(f"the goal asks to change {rel}, and the run left it as it was before the run")
                break
    return out
