"""The one-way flow between layers, checked on every module's parsed imports.

runtime composes graphs, which call guardian, sandbox and memory; those three
never import runtime or graphs; graphs never imports runtime; common (errors,
atomic writer, journal) imports no layer at all. A lazy import inside a
function counts the same as one at the top.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("common", "runtime", "graphs", "guardian", "memory", "sandbox")
FORBIDDEN: dict[str, frozenset[str]] = {
    "common": frozenset({"runtime", "graphs", "guardian", "memory", "sandbox"}),
    "guardian": frozenset({"runtime", "graphs"}),
    "sandbox": frozenset({"runtime", "graphs"}),
    "memory": frozenset({"runtime", "graphs"}),
    "graphs": frozenset({"runtime"}),
    "runtime": frozenset(),
}


def imported_packages(path: Path) -> set[tuple[str, int]]:
    """(top-level package, line) of every absolute import in a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[tuple[str, int]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {(alias.name.split(".")[0], node.lineno) for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add((node.module.split(".")[0], node.lineno))
    return found


def violations(root: Path) -> list[str]:
    """`file:line imports layer` for every import against the flow."""
    bad = []
    for layer in LAYERS:
        for path in sorted((root / layer).rglob("*.py")):
            for package, line in sorted(imported_packages(path)):
                if package in FORBIDDEN[layer]:
                    bad.append(f"{path.relative_to(root)}:{line} imports {package}")
    return bad


def test_every_layer_imports_only_downwards() -> None:
    assert violations(ROOT) == []


def test_the_checker_sees_a_lazy_upward_import(tmp_path: Path) -> None:
    for layer in LAYERS:
        (tmp_path / layer).mkdir()
    (tmp_path / "memory" / "bad.py").write_text("def f():\n    from runtime.config import X\n    return X\n")
    (tmp_path / "graphs" / "bad.py").write_text("import runtime.journal\n")
    (tmp_path / "common" / "bad.py").write_text("from sandbox import errors\n")
    (tmp_path / "runtime" / "ok.py").write_text("from graphs.build import build_graph\n")
    assert violations(tmp_path) == [
        "common/bad.py:1 imports sandbox", "graphs/bad.py:1 imports runtime", "memory/bad.py:2 imports runtime",
    ]


@pytest.mark.parametrize("layer", LAYERS)
def test_each_layer_is_a_package(layer: str) -> None:
    assert (ROOT / layer / "__init__.py").is_file()
