"""What the person's check reads, and which of those files the run changed (read statically).

The check line's words that name pre-run files, followed into what they
run, source, import or name in turn (shell scripts: their words and
`source`/`.` operands; Python: its imports and the file names in its
strings), plus the build files a runner reads (`npm` package.json, `make`
its Makefile). A file among those that the run changed or deleted is the
person's oracle moved: a person must review it, unless the goal names it
as what to change. When the goal names no file at all, a changed code file
is taken as the change and only data and expectation files are flagged.
A file the goal does name that the check sources may still not define a
function or alias named like a shell builtin or common command
(`test(){ return 0; }`): that rewrites the check, not the code.
"""

from __future__ import annotations

import ast
import json
import posixpath
import re
from collections.abc import Iterable
from pathlib import Path

from tether.common.manifest import FileState
from tether.common.walk import read_rel

TEXT_CAP = 65_536
MAX_FILES = 200
WORD = re.compile(r"[\w./+-]+")
SOURCED = re.compile(r"(?:^|[;&|({]\s*|\s)(?:source|\.)\s+[\"']?([\w./-]+)", re.M)
"""A `source FILE` / `. FILE` anywhere in a line (after a separator or a space); the one pattern for what a check
line, a script or the project's tests source (gate.tamper uses it too)."""
DEFINES = re.compile(r"^\s*(?:function\s+([\w.:-]+)|([\w.:\[-]+)\s*\(\s*\))|^\s*alias\s+([\w.:\[-]+)=", re.M)
SHELL_WORDS = frozenset(
    "test [ [[ echo printf true false exit return command builtin type eval exec set source . read cd pwd "
    "trap local declare export unset shift wait kill let diff cmp grep egrep fgrep cat wc sort uniq head tail "
    "sed awk tr cut python python3 bash sh node npm make pytest expr seq stat ls env sha256sum md5sum jq".split()
)
"""Names that, defined as a function or alias by a sourced file, change what the check itself runs."""
RUNNERS = {"npm": ("package.json",), "npx": ("package.json",), "yarn": ("package.json",), "pnpm": ("package.json",),
           "make": ("Makefile", "makefile", "GNUmakefile"), "tox": ("tox.ini",), "bats": ()}
REFERENCE = re.compile(r"\b(as in|like|matching|match(?:es)?|against|see|per|according to|compared? (?:to|with)|"
                       r"same as|format of|shown in|given in|described in|listed in)\s+(?:the\s+)?(?:file\s+)?$",
                       re.I)
CODE_EXT = (".py", ".sh", ".bash", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".go", ".rs", ".c", ".h", ".java")


def _text(root: Path | None, rel: str) -> str:
    if root is None:
        return ""
    return (read_rel(root, rel, TEXT_CAP) or b"").decode("utf-8", "replace")


def _candidates(text: str, base: str, files: set[str]) -> set[str]:
    out = set()
    for w in WORD.findall(text):
        w = w.strip("./") if w.startswith("./") else w
        for rel in (posixpath.normpath(posixpath.join(base, w)), posixpath.normpath(w)):
            if rel in files:
                out.add(rel)
    return out


def _py_imports(text: str, base: str, files: set[str]) -> set[str]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    mods: list[str] = []
    strings: list[str] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            mods += [a.name for a in n.names]
        elif isinstance(n, ast.ImportFrom) and n.module:
            mods += [n.module] + [f"{n.module}.{a.name}" for a in n.names]
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and len(n.value) < 300:
            strings.append(n.value)
    out = set()
    for m in mods:
        path = m.replace(".", "/")
        for folder in {base, ""}:
            for rel in (f"{path}.py", f"{path}/__init__.py"):
                rel = posixpath.normpath(posixpath.join(folder, rel))
                if rel in files:
                    out.add(rel)
    return out | _candidates(" ".join(strings), base, files)


def check_reads(
    command: str, start: dict[str, FileState], after: Path, before: Path | None
) -> tuple[set[str], set[str]]:
    """(files the check reads, files it sources) among the pre-run files, followed a few levels deep."""
    files = {p for p, st in start.items() if st.link is None}
    reads = _candidates(command, "", files)
    words = command.split()
    for w in words:
        for cfg in RUNNERS.get(posixpath.basename(w), ()):
            if cfg in files:
                reads.add(cfg)
    if re.search(r"(?:^|\s)python3?\s+-m\s+([\w.]+)", command):
        for m in re.findall(r"-m\s+([\w.]+)", command):
            reads |= _py_imports(f"import {m}", "", files)
    if re.search(r"python3?\s+-c\s", command):
        reads |= _py_imports(_inline_python(command), "", files)
    sourced = {posixpath.normpath(s.removeprefix("./")) for s in SOURCED.findall(command)} & files
    todo, seen = list(reads), set()
    while todo and len(seen) < MAX_FILES:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.add(rel)
        base = posixpath.dirname(rel)
        for text in {_text(after, rel), _text(before, rel)}:
            found = _py_imports(text, base, files) if rel.endswith(".py") else _candidates(text, base, files)
            found |= {posixpath.normpath(posixpath.join(base, s.removeprefix("./"))) for s in SOURCED.findall(text)}
            sourced |= {posixpath.normpath(posixpath.join(base, s.removeprefix("./")))
                        for s in SOURCED.findall(text)} & files
            todo += [f for f in found & files if f not in seen]
    return seen, sourced


def _inline_python(command: str) -> str:
    m = re.search(r"-c\s+(['\"])(.*?)\1", command, re.S)
    return m.group(2) if m else ""


def goal_targets(goal: str, named: Iterable[str]) -> set[str]:
    """The files the goal names as what to change: a name only ever cited as a reference (`as in expected.txt`)
    is not one."""
    out = set()
    for n in named:
        spots = [m.start() for m in re.finditer(re.escape(n), goal)]
        if not spots or any(not REFERENCE.search(goal[max(0, i - 40):i]) for i in spots):
            out.add(n)
    return out


def _is_target(rel: str, targets: set[str]) -> bool:
    return rel in targets or posixpath.basename(rel) in targets


def new_shadows(rel: str, after: Path, before: Path | None) -> list[str]:
    """Functions or aliases a sourced file newly defines that are named like a builtin or command."""
    old = {next(g for g in m.groups() if g) for m in DEFINES.finditer(_text(before, rel))}
    out = []
    for m in DEFINES.finditer(_text(after, rel)):
        name = next(g for g in m.groups() if g)
        if name in SHELL_WORDS and name not in old:
            out.append(name)
    return sorted(set(out))


def _build_change(rel: str, after: Path, before: Path | None) -> bool:
    """For package.json only its `scripts` count (a new dependency is no change to the check); others: any edit."""
    if posixpath.basename(rel) != "package.json":
        return True
    try:
        old, new = json.loads(_text(before, rel) or "{}"), json.loads(_text(after, rel) or "{}")
    except ValueError:
        return True
    if not isinstance(old, dict) or not isinstance(new, dict):
        return True
    return old.get("scripts") != new.get("scripts")


def input_changes(command: str, goal: str, named: list[str], start: dict[str, FileState],
                  end: dict[str, FileState], after: Path, before: Path | None) -> list[str]:
    """Review lines for the person's check `command`: inputs the run changed, shadows a sourced file defines."""
    reads, sourced = check_reads(command, start, after, before)
    targets = goal_targets(goal, named)
    out = []
    for rel in sorted(reads):
        if end.get(rel) == start.get(rel) or not _build_change(rel, after, before):
            continue
        how = "deleted" if rel not in end else "changed"
        if rel in sourced:
            for name in new_shadows(rel, after, before):
                out.append(f"tampering: {rel}, which your check `{command}` sources, now defines `{name}`, "
                           "a builtin or command the check runs")
        if _is_target(rel, targets) or (not named and rel.endswith(CODE_EXT)):
            continue
        out.append(f"the run {how} {rel}, which your check `{command}` reads: the check's own input moved")
    return out
