"""Tampering past the fixed lists: what the run wrote that changes how the checks run, not what they check.

Parts: `import_shadows()` (a new module, package or sourceless bytecode
where the checks import from, named like a standard-library module: the
interpreter's own list, `sys.stdlib_module_names`), `support_changes()`
(edits to files the project's existing tests load but that are not test
paths: shell helpers they source, pytest plugins the test config names,
modules named like helpers) and `build_test_changes()` (a rewritten
package.json `scripts` or Makefile the project's tests run from). Each
finding is a reason for a person to review, with the file as evidence.
Implementation that patches a test framework is read from the ast
(gate.code_scan).
"""

from __future__ import annotations

import json
import posixpath
import re
import sys
from collections.abc import Iterable
from pathlib import Path

from tether.common.manifest import FileState
from tether.common.walk import read_rel
from tether.gate.check_inputs import SHELL_WORDS, SOURCED, new_shadows
from tether.gate.evidence import is_generated
from tether.gate.rerun import TEST_CONFIG, is_test_path

STDLIB = frozenset(sys.stdlib_module_names) - {"__future__"}
PLUGINS = re.compile(r"(?:-p\s+|pytest_plugins\s*=\s*[\[(]?\s*)[\"']?([\w.]+)")
BATS_LOAD = re.compile(r"^\s*(?:load|bats_load_library)\s+[\"']?([\w./-]+)", re.M)
"""bats' `load NAME`: sources NAME.bash (or NAME) beside the test file."""
BATS_WORDS = frozenset({"run", "skip", "load", "setup", "teardown", "setup_file", "teardown_file", "fail",
                        "bats_require_minimum_version"})
"""bats' own helpers: a file the tests load that defines one changes what every test does."""
PATH_SET = re.compile(r"^\s*(?:export\s+|declare\s+-x\s+)?PATH\+?=|\bPATH=\S*\s+\w|\bhash\s+-p\b", re.M)
"""A PATH the sourced file sets (a prepend shadows every command the tests run after it)."""
HELPER = re.compile(r"^(test_?)?(helpers?|fixtures?|testutils?|testing|test_?support)(\.py)?$", re.I)
TEXT_CAP = 65_536


def _module(rel: str) -> tuple[str, str] | None:
    """(folder, module name) a path makes importable: `x.py`, `x.pyc` (sourceless), `x/__init__.py`."""
    folder, _, name = rel.rpartition("/")
    if name.endswith((".py", ".pyc")) and "__pycache__" not in rel.split("/"):
        return folder, name.rsplit(".", 1)[0]
    if name in ("__init__.py", "__init__.pyc"):
        up, _, pkg = folder.rpartition("/")
        return up, pkg
    return None


def _named(rel: str, named: Iterable[str]) -> bool:
    """The goal names this file (`fix lib.sh`, `create profile.py`): it is the change, not tampering."""
    return any(rel == n or rel.rsplit("/", 1)[-1] == n for n in named)


def import_shadows(start: dict[str, FileState], end: dict[str, FileState], named: Iterable[str] = ()) -> list[str]:
    """New or changed modules named like a stdlib module, where checks import from (the top, or a test's folder),
    and new bytecode with no source next to it (Python imports it as is). A module the goal names is the change."""
    named = list(named)
    roots = {""} | {p.rpartition("/")[0] for p in end if is_test_path(p)}
    out = []
    for rel, st in end.items():
        if start.get(rel) == st:
            continue
        found = _module(rel)
        if found is None:
            continue
        folder, name = found
        if rel.endswith(".pyc") and rel[:-1] not in end:
            out.append(f"the run wrote {rel}, bytecode with no source: Python imports it as is")
        elif folder in roots and name in STDLIB and not _named(rel, named):
            out.append(f"the run wrote {rel}, which replaces the standard module `{name}` for the checks")
    return sorted(out)


def _imported(module: str, texts: Iterable[str]) -> bool:
    last = re.escape(module.rsplit(".", 1)[-1])
    return any(re.search(rf"^\s*(from|import)\s+[\w.]*\b{last}\b", t, re.M) for t in texts)


def _implementation(start: dict[str, FileState], snapshot: Path, tests: dict[str, str]) -> list[str]:
    """The pre-run text of the project's Python files that are not tests (bounded)."""
    rels = [p for p in sorted(start) if p.endswith(".py") and p not in tests and not is_generated(p)][:400]
    return [(read_rel(snapshot, p, TEXT_CAP) or b"").decode("utf-8", "replace") for p in rels]


def _foreign(rel: str, snapshot: Path, code_names: list[str]) -> bool:
    """The goal names code, and this module's pre-run text holds none of it."""
    if not code_names:
        return False
    text = (read_rel(snapshot, rel, TEXT_CAP) or b"").decode("utf-8", "replace")
    return not any(n in text for n in code_names)


def _loaded_shadows(rel: str, workspace: Path | None, snapshot: Path) -> list[str]:
    """A file the tests source that now defines a command or bats helper, or sets PATH: true even of the file the
    goal names (its functions are the code under test, `run` and `[` are not)."""
    if workspace is None:
        return []
    out = [f"tampering: {rel}, which the project's tests load, now defines `{name}`, a command or bats helper the "
           "tests run" for name in new_shadows(rel, workspace, snapshot, SHELL_WORDS | BATS_WORDS)]
    old = (read_rel(snapshot, rel, TEXT_CAP) or b"").decode("utf-8", "replace")
    new = (read_rel(workspace, rel, TEXT_CAP) or b"").decode("utf-8", "replace")
    if len(PATH_SET.findall(new)) > len(PATH_SET.findall(old)):
        out.append(f"tampering: {rel}, which the project's tests load, now sets PATH: every command the tests run "
                   "after it can be another program")
    return out


def support_changes(start: dict[str, FileState], end: dict[str, FileState], snapshot: Path | None,
                    named: Iterable[str] = (), code_names: Iterable[str] = (),
                    workspace: Path | None = None) -> list[str]:
    """Files the project's tests load that are not test paths, changed by the run: sourced helpers, plugins
    named in the test config, helper modules they import. A file the goal names (`fix greet in lib.sh`) is the
    code under test, not a helper of the tests; a helper module imported by implementation too is implementation.
    When the goal names code (`mul()`) but no file, a module that holds none of those names and that only the
    tests import is a helper of the tests too (`checks.py` with `same()`)."""
    code_names = [n for n in code_names if len(n) > 1 and not n.startswith("-")]
    if snapshot is None:
        return []
    named = list(named)
    texts = {p: (read_rel(snapshot, p, TEXT_CAP) or b"").decode("utf-8", "replace")
             for p in start if (is_test_path(p) or p.rsplit("/", 1)[-1] in TEST_CONFIG) and not is_generated(p)}
    loaded = {posixpath.normpath(posixpath.join(d, m.removeprefix("./"))) for p, t in texts.items()
              for m in SOURCED.findall(t) for d in ("", posixpath.dirname(p))}
    loaded |= {posixpath.normpath(posixpath.join(posixpath.dirname(p), m + ext)) for p, t in texts.items()
               if p.endswith(".bats") for m in BATS_LOAD.findall(t) for ext in ("", ".bash")}
    plugins = {m.group(1) for t in texts.values() for m in PLUGINS.finditer(t)}
    out = [line for rel in sorted(loaded & set(start) & set(end)) if end[rel] != start[rel] and not is_test_path(rel)
           for line in _loaded_shadows(rel, workspace, snapshot)]
    for rel in sorted(start):
        if is_test_path(rel) or is_generated(rel) or end.get(rel) == start[rel] or _named(rel, named):
            continue
        module = rel.removesuffix(".py").replace("/", ".")
        if rel in loaded or module in plugins:
            out.append(f"the run changed {rel}, which the project's tests load")
        elif (rel.endswith(".py") and (HELPER.search(rel.rsplit("/", 1)[-1]) or _foreign(rel, snapshot, code_names))
              and _imported(module, texts.values())
              and not _imported(module, _implementation(start, snapshot, texts))):
            out.append(f"the run changed {rel}, a helper the project's tests import")
    return out


BUILD_FILES = {"npm": ("package.json", ".npmrc", ".yarnrc", ".yarnrc.yml"),
               "make": ("GNUmakefile", "makefile", "Makefile"), "go": ("go.work",),
               "cargo": (".cargo/config.toml", ".cargo/config")}
"""What decides how `npm test` / `make test` run: a new `.npmrc` (`script-shell=true`) or a new GNUmakefile (make
prefers it to Makefile), a go.work (other module folders) or a cargo config (a `runner` or an alias) rewrites the
test command as surely as an edit."""


def _scripts(text: str) -> object:
    try:
        data = json.loads(text or "{}")
    except ValueError:
        return text
    return data.get("scripts") if isinstance(data, dict) else text


def build_test_changes(kinds: Iterable[str], start: dict[str, FileState], end: dict[str, FileState],
                       workspace: Path, snapshot: Path | None, named: Iterable[str] = ()) -> list[str]:
    """The run rewrote how the project's tests run: package.json's `scripts` or an npm config for `npm test`, a
    Makefile for `make test`. The project's proof runs the pre-run version (gate.stripped); a person must see the
    rewrite, unless the goal names the file."""
    named = list(named)
    out = []
    for kind in sorted(set(kinds) & set(BUILD_FILES)):
        for rel in BUILD_FILES[kind]:
            if end.get(rel) == start.get(rel) or _named(rel, named):
                continue
            old = (read_rel(snapshot, rel, TEXT_CAP) or b"").decode("utf-8", "replace") if snapshot else ""
            new = (read_rel(workspace, rel, TEXT_CAP) or b"").decode("utf-8", "replace")
            if rel == "package.json" and rel in start and rel in end and _scripts(old) == _scripts(new):
                continue
            what = "the `scripts` of package.json" if rel == "package.json" else rel
            how = "wrote" if rel not in start else "deleted" if rel not in end else "rewrote"
            out.append(f"tampering: the run {how} {what}, where the project's tests run from (`{kind} test`); "
                       "the gate ran the pre-run version")
    return out
