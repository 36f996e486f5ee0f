"""What the project's tests compare with, moved by the run: their data and the helpers they source by glob.

A project test proves the goal only if what it checks against is what it
was before the run. `project_data_changes()` follows the pre-run tests
(and their runner's scripts) into the files they read, by name, by a name
built from constants, by a glob or through package.json/Makefile, and
flags the data files among them (expected outputs, fixtures, cases: not
code, build files or test files, which are judged elsewhere) that the run
changed, deleted, replaced by a link, or created where a pre-run test names
them (a fixture that was missing, so the test errored before); and a helper
they source through a glob (`for f in lib/*.sh; do . "$f"; done`) that the
run changed. Files the goal names are the change, not a move; a file a
Makefile rule builds is a product, which the gate has make rebuild
(gate.make_products), not data.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from tether.common.manifest import FileState
from tether.gate.check_inputs import (
    BUILD_FILES,
    CODE_EXT,
    MAX_FILES,
    _candidates,
    _created,
    _globbed,
    _is_target,
    _py_imports,
    _templated,
    _text,
    check_reads,
    goal_targets,
)
from tether.gate.make_products import products
from tether.gate.rerun import is_test_path

SOURCE_VAR = re.compile(r"(?:^|[;&|({]\s*|\s)(?:source|\.)\s+[\"']?\$")
"""`. "$f"`, `source $lib`: a file named by a variable is sourced; with a glob in the same text, every match is."""
MAKEFILES = frozenset({"Makefile", "makefile", "GNUmakefile"})


def _data(rel: str) -> bool:
    """A file a test compares with or reads as input (expected output, fixture, case), not code or a build file."""
    name = posixpath.basename(rel)
    return not rel.endswith(CODE_EXT) and name not in BUILD_FILES and name not in MAKEFILES and not is_test_path(rel)


def project_data_changes(goal: str, named: list[str], start: dict[str, FileState], end: dict[str, FileState],
                         after: Path, before: Path | None) -> list[str]:
    """Review lines for what the project's tests compare with that the run moved: a data file they read (by
    name, by a name built from constants, by a glob, through their runner's scripts) that the run changed,
    deleted, replaced by a link, or created where a pre-run test names it; a helper they source through a glob
    (`for f in lib/*.sh; do . "$f"; done`) that the run changed. Files the goal names are the change."""
    tests = sorted(p for p in start if is_test_path(p) or posixpath.basename(p) in BUILD_FILES)[:MAX_FILES]
    if not tests:
        return []
    reads, _ = check_reads(" ".join(tests), start, after, before, end)
    created = {p for p in _created(start, end) if _data(p)}
    pre_run = {p for p, st in start.items() if st.link is None}
    globbed: set[str] = set()
    for t in tests:
        base = posixpath.dirname(t)
        old = _text(before, t)  # only a pre-run test's own words: a test the run wrote may name what it likes
        reads |= _py_imports(old, base, created) if t.endswith(".py") else _candidates(old, base, created)
        reads |= {p for p in _templated(old, base, pre_run) if _data(p)}  # `data/$f.txt`, f"cases/{n}.json"
        for text in {old, _text(after, t)}:
            if SOURCE_VAR.search(text):
                globbed |= _globbed(text, base, pre_run)
    targets = goal_targets(goal, named)
    built = set(products(after, start, end, reads)) if after is not None else set()  # make rebuilds those itself
    out = []
    for rel in sorted(reads | globbed):
        if end.get(rel) == start.get(rel) or _is_target(rel, targets) or is_test_path(rel) or rel in built:
            continue
        how = ("deleted" if rel not in end else "replaced by a link" if end[rel].link is not None
               else "changed" if rel in start else "created")
        if _data(rel):
            out.append(f"the run {how} {rel}, which the project's tests read: what they compare with moved")
        elif rel in globbed:
            out.append(f"the run {how} {rel}, which the project's tests source through a glob")
    return out
