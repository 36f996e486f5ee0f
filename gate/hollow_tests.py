"""Whether the Python tests a run wrote can fail at all: for a goal whose deliverable is tests.

Parts: `hollow()`. A tests-only goal is proven by the person's check running
the new tests and passing; a test that asserts nothing that can be false
(`assertEqual(x, x)`, `assert True`, no assertion) or never runs (skip
decorators, `skipTest`, `pytest.skip`, a skipped class or module) passes
on any code. So does one whose assertions cannot be reached or cannot
matter: after a `return`, in a loop over an empty literal (`for c in []`,
`self.CASES = []`), inside `assertRaises(Exception)`/`pytest.raises
(Exception)` (the AssertionError is the exception caught), comparing two
calls of the same function (`assertEqual(add(2, 3), add(3, 2))`: no
expected value), or only through a helper of the file that asserts only
under an `if` with no asserting `else`. A shell test (`test_*.sh`,
`*.bats`) that compares nothing (no `[`, `test`, `grep`, `diff`, `cmp`,
`exit 1`, `set -e`) passes on any output. What it cannot see: a weak but
real assertion (`assertIsNotNone(add(2, 3))`), a condition that never holds
when it is not an `if` of the helper, tests in other languages, a skip
decided through a helper.
"""

from __future__ import annotations

import ast
import re

__all__ = ["hollow", "is_python_test", "is_shell_test", "is_written_test"]

_TEST_FILE = re.compile(r"(^|/)(test_[^/]*|[^/]*_test|tests?)\.py$|(^|/)tests?/[^/]*\.py$")
_SKIP = re.compile(r"(^|\.)(skip|skipIf|skipUnless|expectedFailure|xfail|skipif)$")
_SAME_ARGS = {"assertEqual", "assertEquals", "assertIs", "assertListEqual", "assertDictEqual", "assertTupleEqual",
              "assertSetEqual", "assertSequenceEqual", "assertMultiLineEqual", "assertCountEqual", "assertAlmostEqual",
              "assertGreaterEqual", "assertLessEqual", "assertIn"}
_RAISES = {"assertRaises", "assertRaisesRegex", "assertWarns", "raises", "assertLogs"}
_BROAD = {"Exception", "BaseException", "AssertionError", "failureException"}
"""Exceptions a raises-context catches that a failing assertion inside it raises too."""
_SHELL_TEST = re.compile(r"(^|/)(test_[^/]*|[^/]*_test|[^/]*\.test)\.(sh|bash)$|\.bats$|(^|/)tests?/[^/]*\.(sh|bash)$")
_SHELL_COMPARES = re.compile(
    r"(^|[\s;&|(!])(\[\[?|test|grep|egrep|fgrep|diff|cmp|false|assert\w*|expect|bc)(\s|$)|"
    r"\bexit\s+([1-9]|\$)|\breturn\s+[1-9]|\bset\s+-[a-z]*e|\bset\s+-o\s+errexit|==|!=|-eq\b|-ne\b")
"""Shell words that compare output or make the script fail: without one, a shell test passes on any output."""


def is_shell_test(rel: str) -> bool:
    return _SHELL_TEST.search(rel) is not None


def _shell_compares(text: str) -> bool:
    """Some line that is not a comment compares output or can make the script fail."""
    code = "\n".join(line.split("#", 1)[0] if not line.lstrip().startswith("#!") else "" for line in text.splitlines())
    return _SHELL_COMPARES.search(code) is not None


def is_written_test(rel: str) -> bool:
    return is_python_test(rel) or is_shell_test(rel)


def is_python_test(rel: str) -> bool:
    return _TEST_FILE.search(rel) is not None


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        return _name(node.func)
    return ""


def _skipped(decorators: list[ast.expr]) -> bool:
    return any(_SKIP.search(_name(d)) for d in decorators)


def _uses_code(node: ast.AST) -> bool:
    """It calls something or reads a name other than `self` and constants: the code under test can reach it."""
    return any(isinstance(n, ast.Call) or isinstance(n, ast.Name) and n.id not in ("self", "True", "False", "None")
               for n in ast.walk(node))


def _always_true(node: ast.AST) -> bool:
    """`x or True`, `True or x`: a truth that does not depend on the code."""
    return isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and any(
        isinstance(v, ast.Constant) and bool(v.value) for v in node.values)


def _same_call(a: ast.AST, b: ast.AST) -> bool:
    """Both sides call the same function: the code under test is compared with itself, no expected value."""
    return isinstance(a, ast.Call) and isinstance(b, ast.Call) and bool(_name(a.func)) and _name(a.func) == _name(
        b.func)


class _File:
    """One test file: its helpers and the names bound to empty literals, to judge what its tests' asserts reach."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.helpers: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        scopes: list[ast.Module | ast.ClassDef] = [tree, *[n for n in tree.body if isinstance(n, ast.ClassDef)]]
        for scope in scopes:
            for fn in scope.body:
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and not fn.name.startswith("test"):
                    self.helpers.setdefault(fn.name, fn)
        bound: dict[str, list[ast.AST]] = {}
        for n in ast.walk(tree):
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    key = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else ""
                    bound.setdefault(key, []).append(n.value)
            elif isinstance(n, (ast.AugAssign, ast.AnnAssign)):
                t = n.target
                key = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else ""
                bound.setdefault(key, []).append(n.value if isinstance(n, ast.AnnAssign) and n.value else n)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in (
                    "append", "extend", "insert", "update", "add", "setdefault", "__setitem__"):
                v = n.func.value
                key = v.id if isinstance(v, ast.Name) else v.attr if isinstance(v, ast.Attribute) else ""
                bound.setdefault(key, []).append(n)
        self.empty = {k for k, vs in bound.items() if k and len(vs) == 1 and _empty_literal(vs[0])}

    def empty_iter(self, node: ast.AST) -> bool:
        """A loop over this runs no iteration: `[]`, `()`, `range(0)`, or a name only ever bound to one."""
        if _empty_literal(node):
            return True
        if isinstance(node, ast.Name):
            return node.id in self.empty
        return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr in self.empty

    def live(self, body: list[ast.stmt]) -> list[ast.AST]:
        """The assertion nodes this body can reach: none after a `return`, in a loop over nothing, or where a
        failing assertion is caught (`except Exception`, `assertRaises(Exception)`)."""
        out: list[ast.AST] = []
        for stmt in body:
            out += self._live_stmt(stmt)
            if isinstance(stmt, ast.Return):
                break
        return out

    def _live_stmt(self, stmt: ast.stmt) -> list[ast.AST]:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return []
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            return ([] if self.empty_iter(stmt.iter) else self.live(stmt.body)) + self.live(stmt.orelse)
        if isinstance(stmt, (ast.While, ast.If)):
            return self._exprs(stmt.test) + self.live(stmt.body) + self.live(stmt.orelse)
        if isinstance(stmt, ast.Try):
            caught = any(_catches_failure(h) for h in stmt.handlers)
            return (([] if caught else self.live(stmt.body)) + [n for h in stmt.handlers for n in self.live(h.body)]
                    + self.live(stmt.orelse) + self.live(stmt.finalbody))
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            inner = self.live(stmt.body)
            broad = [i.context_expr for i in stmt.items if _broad_raises(i.context_expr)]
            if broad:  # the assertion failing inside is the exception the context expects: neither counts
                return [] if any(self._asserts(n) for n in inner) else broad
            return [n for i in stmt.items for n in self._exprs(i.context_expr)] + inner
        return self._exprs(stmt)

    @staticmethod
    def _exprs(node: ast.AST) -> list[ast.AST]:
        return [n for n in ast.walk(node) if isinstance(n, (ast.Assert, ast.Call))]

    @staticmethod
    def _asserts(node: ast.AST) -> bool:
        return isinstance(node, ast.Assert) or isinstance(node, ast.Call) and (
            _name(node.func).rsplit(".", 1)[-1].startswith("assert") or _name(node.func).rsplit(".", 1)[-1] == "fail")

    def helper(self, call: ast.Call) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        name = _name(call.func)
        if name.startswith(("self.", "cls.")):
            name = name.split(".", 1)[1]
        return self.helpers.get(name) if "." not in name else None

    def always_asserts(self, body: list[ast.stmt], seen: frozenset[str]) -> bool:
        """Every path through this helper body reaches an assertion that can fail (an `if` counts only when both
        branches do)."""
        for stmt in body:
            if isinstance(stmt, ast.If):
                if self.always_asserts(stmt.body, seen) and self.always_asserts(stmt.orelse, seen):
                    return True
            elif isinstance(stmt, ast.Return) and stmt.value is None:
                return False
            elif any(self.can_fail(n, seen) for n in self._live_stmt(stmt)):
                return True
            if isinstance(stmt, ast.Return):
                return False
        return False

    def can_fail(self, call: ast.AST, seen: frozenset[str] = frozenset()) -> bool:
        if isinstance(call, ast.Assert):
            test = call.test
            if _always_true(test):
                return False
            if isinstance(test, ast.Compare) and len(test.comparators) == 1:
                if ast.dump(test.left) == ast.dump(test.comparators[0]) or _same_call(test.left,
                                                                                       test.comparators[0]):
                    return False
            return _uses_code(test)
        if not isinstance(call, ast.Call):
            return False
        helper = self.helper(call)
        if helper is not None:
            if helper.name in seen:
                return False
            return self.always_asserts(helper.body, seen | {helper.name})
        method = _name(call.func).rsplit(".", 1)[-1]
        if method in _RAISES:
            return True
        if not (method.startswith("assert") or method in ("fail", "check")):
            return False
        args = call.args
        if method in ("assertTrue", "assert_") and args and _always_true(args[0]):
            return False
        if method in _SAME_ARGS and len(args) >= 2 and (ast.dump(args[0]) == ast.dump(args[1])
                                                        or _same_call(args[0], args[1])):
            return False
        return any(_uses_code(a) for a in args)


def _empty_literal(node: ast.AST) -> bool:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return not node.elts
    if isinstance(node, ast.Dict):
        return not node.keys
    if isinstance(node, ast.Constant):
        return node.value in ("", b"")
    if isinstance(node, ast.Call) and _name(node.func) in ("list", "tuple", "set", "dict", "frozenset", "range"):
        if not node.args and not node.keywords:
            return True
        return (_name(node.func) == "range" and len(node.args) == 1 and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, int) and node.args[0].value <= 0)
    return False


def _broad_raises(node: ast.AST) -> bool:
    """`assertRaises(Exception)`, `pytest.raises(BaseException)`: it also catches a failing assertion."""
    if not isinstance(node, ast.Call) or _name(node.func).rsplit(".", 1)[-1] not in _RAISES or not node.args:
        return False
    first = node.args[0]
    names = [_name(e) for e in (first.elts if isinstance(first, ast.Tuple) else [first])]
    return any(n.rsplit(".", 1)[-1] in _BROAD for n in names)


def _real(fn: ast.FunctionDef | ast.AsyncFunctionDef, file: _File) -> bool:
    if _skipped(fn.decorator_list):
        return False
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and _name(n.func).rsplit(".", 1)[-1] in ("skipTest", "skip"):
            return False
    return any(file.can_fail(n) for n in file.live(fn.body))


def _catches_failure(handler: ast.ExceptHandler) -> bool:
    """A bare `except:`, or one for AssertionError, Exception or BaseException: a failing assertion inside is lost."""
    if handler.type is None:
        return True
    names = [_name(e) for e in (handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type])]
    return any(n.rsplit(".", 1)[-1] in ("AssertionError", "Exception", "BaseException", "failureException")
               for n in names)


def _module_skipped(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(_name(t) == "pytestmark" for t in node.targets):
            return any(_SKIP.search(_name(n)) for n in ast.walk(node.value))
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and _name(node.value.func).endswith("skip"):
            return True
    return False


def hollow(texts: dict[str, str]) -> tuple[int, list[str]]:
    """How many test functions in these test files can fail (a shell test file counts as one), and what the others
    are (file::name: why)."""
    real, why = 0, []
    for rel, text in sorted(texts.items()):
        if is_shell_test(rel) and not is_python_test(rel):
            if _shell_compares(text):
                real += 1
            else:
                why.append(f"{rel} compares nothing ([, test, grep, diff, cmp, exit 1, set -e): it passes on any "
                           "output")
            continue
        if not is_python_test(rel):
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        whole, file = _module_skipped(tree), _File(tree)
        for cls in [n for n in tree.body if isinstance(n, ast.ClassDef)] + [tree]:
            body = cls.body
            off = whole or isinstance(cls, ast.ClassDef) and _skipped(cls.decorator_list)
            for fn in body:
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name.startswith("test"):
                    if not off and _real(fn, file):
                        real += 1
                    else:
                        why.append(f"{rel}::{fn.name} " + ("is skipped" if off or _skipped(fn.decorator_list)
                                                            else "asserts nothing that can fail, or is skipped"))
    return real, why
