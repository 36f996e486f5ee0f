"""The string a constant Python expression builds, so a file named in pieces is still a named file.

A check or test that opens `'ca' + 'ses' + '.json'`, `f"{'cases'}.json"`,
`os.path.join(HERE, 'cases', 'ann.txt')` or `Path('cases') / 'ann.txt'`
reads a file as surely as one that writes the name out; the gate follows
what its checks read (gate.check_inputs), so it folds these back into one
name. A leading variable of a join (`HERE`, `__file__`'s folder) is taken as
the script's own folder.
"""

from __future__ import annotations

import ast
import posixpath

JOINS = frozenset({"join", "Path", "PurePath", "PosixPath", "joinpath"})


def fold(node: ast.AST, depth: int = 0) -> str | None:
    """The string a constant expression builds (concatenation, f-strings of constants, path joins of their
    constant tail, `'/'.join([...])`), or None; a leading variable of a join (`HERE`) is the script's folder."""
    if depth > 8:
        return None
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        parts = [fold(v, depth + 1) for v in node.values]
        return "".join(p for p in parts if p is not None) if all(p is not None for p in parts) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Div)):
        left, right = fold(node.left, depth + 1), fold(node.right, depth + 1)
        if right is None:
            return None
        if isinstance(node.op, ast.Div):
            return posixpath.join(left, right) if left else right
        return left + right if left is not None else None
    if isinstance(node, ast.Call):
        name = getattr(node.func, "attr", getattr(node.func, "id", ""))
        if (name == "join" and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Constant)
                and isinstance(node.func.value.value, str) and len(node.args) == 1
                and isinstance(node.args[0], (ast.List, ast.Tuple))):
            parts = [fold(e, depth + 1) for e in node.args[0].elts]
            return node.func.value.value.join(parts) if parts and all(p is not None for p in parts) else None
        if name in JOINS:
            tail: list[str] = []
            for a in reversed(node.args):
                f = fold(a, depth + 1)
                if f is None:
                    break
                tail.insert(0, f)
            return posixpath.join(*tail) if tail else None
    return None
