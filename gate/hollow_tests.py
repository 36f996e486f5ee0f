"""Whether the Python tests a run wrote can fail at all: for a goal whose deliverable is tests.

Parts: `hollow()`. A tests-only goal is proven by the person's check running
the new tests and passing; a test that asserts nothing that can be false
(`assertEqual(x, x)`, `assert True`, no assertion) or never runs (skip
decorators, `skipTest`, `pytest.skip`, a skipped class or module) passes
on any code. What it cannot see: a weak but real assertion (`assertIsNotNone
(add(2, 3))`), tests in other languages, a skip decided through a helper.
"""

from __future__ import annotations

import ast
import re

__all__ = ["hollow", "is_python_test"]

_TEST_FILE = re.compile(r"(^|/)(test_[^/]*|[^/]*_test|tests?)\.py$|(^|/)tests?/[^/]*\.py$")
_SKIP = re.compile(r"(^|\.)(skip|skipIf|skipUnless|expectedFailure|xfail|skipif)$")
_SAME_ARGS = {"assertEqual", "assertEquals", "assertIs", "assertListEqual", "assertDictEqual", "assertTupleEqual",
              "assertSetEqual", "assertSequenceEqual", "assertMultiLineEqual", "assertCountEqual", "assertAlmostEqual",
              "assertGreaterEqual", "assertLessEqual", "assertIn"}
_RAISES = {"assertRaises", "assertRaisesRegex", "assertWarns", "raises", "assertLogs"}


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


def _can_fail(call: ast.AST) -> bool:
    if isinstance(call, ast.Assert):
        test = call.test
        if _always_true(test):
            return False
        if isinstance(test, ast.Compare) and len(test.comparators) == 1:
            if ast.dump(test.left) == ast.dump(test.comparators[0]):
                return False
        return _uses_code(test)
    if not isinstance(call, ast.Call):
        return False
    method = _name(call.func).rsplit(".", 1)[-1]
    if method in _RAISES:
        return True
    if not (method.startswith("assert") or method in ("fail", "check")):
        return False
    args = call.args
    if method in ("assertTrue", "assert_") and args and _always_true(args[0]):
        return False
    if method in _SAME_ARGS and len(args) >= 2 and ast.dump(args[0]) == ast.dump(args[1]):
        return False
    return any(_uses_code(a) for a in args)


def _real(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    if _skipped(fn.decorator_list):
        return False
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and _name(n.func).rsplit(".", 1)[-1] in ("skipTest", "skip"):
            return False
    swallowed = {id(n) for t in ast.walk(fn) if isinstance(t, ast.Try) and any(_catches_failure(h) for h in t.handlers)
                 for stmt in t.body for n in ast.walk(stmt)}
    return any(_can_fail(n) for n in ast.walk(fn) if isinstance(n, (ast.Assert, ast.Call)) and id(n) not in swallowed)


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
    """How many test functions in these Python test files can fail, and what the others are (file::name: why)."""
    real, why = 0, []
    for rel, text in sorted(texts.items()):
        if not is_python_test(rel):
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        whole = _module_skipped(tree)
        for cls in [n for n in tree.body if isinstance(n, ast.ClassDef)] + [tree]:
            body = cls.body
            off = whole or isinstance(cls, ast.ClassDef) and _skipped(cls.decorator_list)
            for fn in body:
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name.startswith("test"):
                    if not off and _real(fn):
                        real += 1
                    else:
                        why.append(f"{rel}::{fn.name} " + ("is skipped" if off or _skipped(fn.decorator_list)
                                                            else "asserts nothing that can fail, or is skipped"))
    return real, why
