"""The one-way flow between layers, checked on every module's parsed imports.

runtime composes graphs, which call the gate, guardian, sandbox and memory;
the gate uses guardian and sandbox; guardian, sandbox and memory never import
each other nor anything above them; common imports no layer at all. Inside
runtime, features are folders: only cli imports views and eval, nothing but
cli imports cli, the run hooks never import the run loop that calls them, and
the agent adapters (the guardian as other agents' hook) stand beside trust.
Every import names the one namespace (`tether.runtime...`, never `runtime...`).
A lazy import inside a function counts the same as one at the top.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("common", "gate", "graphs", "guardian", "memory", "runtime", "sandbox")
FORBIDDEN: dict[str, frozenset[str]] = {
    "common": frozenset({"gate", "graphs", "guardian", "memory", "runtime", "sandbox"}),
    "guardian": frozenset({"gate", "graphs", "memory", "runtime", "sandbox"}),
    "sandbox": frozenset({"gate", "graphs", "guardian", "memory", "runtime"}),
    "memory": frozenset({"gate", "graphs", "guardian", "runtime", "sandbox"}),
    "gate": frozenset({"graphs", "memory", "runtime"}),
    "graphs": frozenset({"runtime"}),
    "runtime": frozenset(),
}
INSIDE_RUNTIME: dict[str, frozenset[str]] = {
    # feature folder -> runtime features it must not import
    "run": frozenset({"cli", "views", "eval", "agents"}),
    "hooks": frozenset({"cli", "views", "eval", "run", "agents"}),
    "trust": frozenset({"cli", "views", "eval", "run", "hooks", "agents"}),
    "agents": frozenset({"cli", "views", "eval", "run", "hooks", "workspace", "models"}),
    "workspace": frozenset({"cli", "views", "eval", "run", "hooks", "trust", "agents"}),
    "models": frozenset({"cli", "views", "eval", "run", "hooks", "trust", "workspace", "agents"}),
    "views": frozenset({"cli", "eval", "agents"}),
    "eval": frozenset({"cli", "views", "agents"}),
    "cli": frozenset(),
}
"""Modules at runtime/'s own top (config, terminal, project) are leaves: they import no feature."""
RUNTIME_LEAF_BANS = frozenset(INSIDE_RUNTIME)


def imports_of(path: Path) -> set[tuple[str, int]]:
    """(dotted module, line) of every absolute import in a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[tuple[str, int]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {(alias.name, node.lineno) for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add((node.module, node.lineno))
            found |= {(f"{node.module}.{alias.name}", node.lineno) for alias in node.names}
    return found


def _feature(layer: str, path: Path, root: Path) -> str | None:
    """The runtime feature folder a module is in (None at runtime/'s top)."""
    rel = path.relative_to(root / layer).parts
    return rel[0] if layer == "runtime" and len(rel) > 1 else None


def violations(root: Path) -> list[str]:
    """`file:line imports X` for every import against the flow."""
    bad: set[str] = set()
    for layer in LAYERS:
        for path in sorted((root / layer).rglob("*.py")):
            where = path.relative_to(root)
            feature = _feature(layer, path, root)
            for module, line in sorted(imports_of(path)):
                parts = module.split(".")
                if parts[0] in LAYERS:
                    bad.add(f"{where}:{line} imports {parts[0]} outside the tether namespace")
                    continue
                if parts[0] != "tether" or len(parts) < 2:
                    continue
                target = parts[1]
                if target in FORBIDDEN[layer]:
                    bad.add(f"{where}:{line} imports {target}")
                if layer == "runtime" and target == "runtime" and len(parts) > 3:
                    sub = parts[2]
                    banned = INSIDE_RUNTIME.get(feature, frozenset()) if feature else RUNTIME_LEAF_BANS
                    if sub in banned and sub != feature:
                        bad.add(f"{where}:{line} imports runtime.{sub}")
    return sorted(bad)


def test_every_layer_imports_only_downwards() -> None:
    assert violations(ROOT) == []


def test_the_checker_sees_bad_imports(tmp_path: Path) -> None:
    for layer in LAYERS:
        (tmp_path / layer).mkdir()
    (tmp_path / "runtime" / "run").mkdir()
    (tmp_path / "runtime" / "hooks").mkdir()
    (tmp_path / "memory" / "bad.py").write_text("def f():\n    from tether.runtime.config import X\n    return X\n")
    (tmp_path / "graphs" / "bad.py").write_text("import tether.runtime.config\n")
    (tmp_path / "common" / "bad.py").write_text("from tether.sandbox import errors\n")
    (tmp_path / "guardian" / "bad.py").write_text("from tether.gate.checks import classify\n")
    (tmp_path / "sandbox" / "old.py").write_text("from common.errors import TetherError\n")
    (tmp_path / "runtime" / "run" / "bad.py").write_text("from tether.runtime.cli.common import fail\n")
    (tmp_path / "runtime" / "hooks" / "bad.py").write_text("from tether.runtime.run.runner import start_run\n")
    (tmp_path / "runtime" / "ok.py").write_text("from tether.graphs.build import build_graph\n")
    assert violations(tmp_path) == [
        "common/bad.py:1 imports sandbox", "graphs/bad.py:1 imports runtime", "guardian/bad.py:1 imports gate",
        "memory/bad.py:2 imports runtime", "runtime/hooks/bad.py:1 imports runtime.run",
        "runtime/run/bad.py:1 imports runtime.cli", "sandbox/old.py:1 imports common outside the tether namespace",
    ]


@pytest.mark.parametrize("layer", LAYERS)
def test_each_layer_is_a_package(layer: str) -> None:
    assert (ROOT / layer / "__init__.py").is_file()
