"""What make would build, when the run left it already built: a product the check must rebuild, not trust.

make decides what to rebuild by the files it finds and their times. A run
that writes a rule's target itself (`out.txt` from a still-broken
`gen.sh`, a shell script named `app` newer than a broken `app.c`, any of
them dated in the future) makes `make test` run on that file and never on
its sources. A careful reviewer builds from the sources: `products()` names
the files the run wrote that a Makefile rule builds (explicit targets and
`%` pattern rules), and `drop()` removes them from the gate's after copy
before its checks run, so make rebuilds them from what the run left in the
sources; an honest build gives the same file back. `vpath_shadows()` names
a file the run created where make looks first for a prerequisite that
lives in a `vpath`/`VPATH` folder (`greet.sh` in front of `src/greet.sh`).
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import posixpath
import re
from collections.abc import Iterable
from pathlib import Path

from tether.common.manifest import FileState
from tether.common.walk import DIR_FLAGS, open_root, read_rel

MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
TEXT_CAP = 262_144
RULE = re.compile(r"^([^\t#=:\s][^#=:\n]*?)[ \t]*::?(?!=)[ \t]*([^#\n]*)$", re.M)
VPATH = re.compile(r"^[ \t]*(?:vpath[ \t]+(\S+)[ \t]+(.+)|VPATH[ \t]*[:+]?=[ \t]*(.+))$", re.M)
MAKE_WORD = re.compile(r"(?:^|[\s;&|(`])(?:g?make|\S*/make)(?:\s|$)")


def uses_make(commands: Iterable[str]) -> bool:
    """Whether any of these command lines runs make."""
    return any(MAKE_WORD.search(c) for c in commands)


def _makefile_texts(workspace: Path, start: dict[str, FileState], end: dict[str, FileState]) -> list[tuple[str, str]]:
    """(folder, text) of every Makefile in the final workspace or before the run (bounded)."""
    out = []
    for rel in sorted(set(start) | set(end)):
        if posixpath.basename(rel) in MAKEFILES and len(out) < 20:
            text = (read_rel(workspace, rel, TEXT_CAP) or b"").decode("utf-8", "replace")
            out.append((posixpath.dirname(rel), text.replace("\\\n", " ")))
    return out


def _targets(text: str) -> tuple[set[str], list[str]]:
    """(explicit targets, `%` patterns) of a Makefile's rules; special targets (`.PHONY`) and phony names out."""
    phony: set[str] = set()
    names: set[str] = set()
    patterns: list[str] = []
    for m in RULE.finditer(text):
        heads = m.group(1).split()
        if heads and heads[0] == ".PHONY":
            phony |= set(m.group(2).split())
            continue
        for h in heads:
            if h.startswith(".") and h.isupper() or "$" in h:
                continue
            if "%" in h:
                patterns.append(h)
            else:
                names.add(h)
    return names - phony, patterns


def products(workspace: Path, start: dict[str, FileState], end: dict[str, FileState], written: Iterable[str],
             named: Iterable[str] = ()) -> list[str]:
    """Files the run wrote (created or changed) that a Makefile rule builds, the goal's named files excepted."""
    named = set(named)
    wrote = {p for p in written if p in end and end[p].link is None and end.get(p) != start.get(p)}
    out = set()
    for folder, text in _makefile_texts(workspace, start, end):
        names, patterns = _targets(text)
        for rel in wrote:
            if posixpath.basename(rel) in MAKEFILES or rel in named or posixpath.basename(rel) in named:
                continue
            inner = posixpath.relpath(rel, folder) if folder else rel
            if inner.startswith("../"):
                continue
            if inner in names or any(fnmatch.fnmatchcase(inner, p.replace("%", "*")) for p in patterns):
                out.add(rel)
    return sorted(out)


def drop(folder: Path, rels: Iterable[str]) -> list[str]:
    """Remove these files from the gate's copy `folder`, by descriptor, no link followed; the ones removed."""
    gone = []
    root = open_root(folder)
    try:
        for rel in rels:
            parts = [p for p in rel.split("/") if p]
            if not parts or any(p in (".", "..") for p in parts):
                continue
            fds = [root]
            try:
                with contextlib.suppress(OSError):
                    for part in parts[:-1]:
                        fds.append(os.open(part, DIR_FLAGS, dir_fd=fds[-1]))
                    os.unlink(parts[-1], dir_fd=fds[-1])
                    gone.append(rel)
            finally:
                for fd in fds[1:]:
                    os.close(fd)
    finally:
        os.close(root)
    return gone


def vpath_shadows(workspace: Path, start: dict[str, FileState], end: dict[str, FileState],
                  named: Iterable[str] = ()) -> list[str]:
    """Review lines for files the run created where make finds them before a pre-run file of a vpath folder."""
    named = set(named)
    created = [p for p in end if p not in start]
    out = []
    for folder, text in _makefile_texts(workspace, start, end):
        dirs: list[tuple[str, str]] = []
        for m in VPATH.finditer(text):
            pattern = m.group(1) or "%"
            for d in re.split(r"[\s:]+", (m.group(2) or m.group(3) or "").strip()):
                if d and "$" not in d:
                    dirs.append((pattern, posixpath.normpath(posixpath.join(folder, d))))
        for rel in created:
            if rel in named or posixpath.basename(rel) in named or posixpath.dirname(rel) != folder:
                continue
            name = posixpath.basename(rel)
            for pattern, d in dirs:
                hidden = posixpath.join(d, name)
                if hidden in start and fnmatch.fnmatchcase(name, pattern.replace("%", "*")):
                    out.append(f"the run created {rel}, which make finds before {hidden} (vpath): the check "
                               "builds from the run's copy, not from the source it names")
    return sorted(set(out))
