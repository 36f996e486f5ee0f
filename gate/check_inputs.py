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
import bisect
import fnmatch
import json
import posixpath
import re
from collections.abc import Iterable
from pathlib import Path

from tether.common.manifest import FileState
from tether.common.walk import read_rel
from tether.gate.goal import named_identifiers
from tether.gate.py_fold import fold as _fold
from tether.gate.rerun import is_test_path

TEXT_CAP = 65_536
MAX_FILES = 200
WORD = re.compile(r"[\w./+-]+")
GLOB = re.compile(r"[\w./-]*(?:\*|\?|\[[\w.-]+\])[\w./*?-]*")
"""A word with a glob (`lib/*.sh`, `checks/?.sh`, `case[12].txt`): a shell loop or `glob()` reads every match."""
DYNAMIC = re.compile(r"(?:\$\{?\w+\}?|\$\([^()]*(?:\([^()]*\)[^()]*)*\)|`[^`]*`)/+([\w./+-]+)")
"""A path built at run time from a variable or a command (`$HERE/lib/assert.sh`, `$(dirname "$0")/lib.sh`): its tail."""
SOURCED = re.compile(r"(?:^|[;&|({]\s*|\s)(?:source|\.)\s+[\"']?([\w./-]+)", re.M)
"""A `source FILE` / `. FILE` anywhere in a line (after a separator or a space); the one pattern for what a check
line, a script or the project's tests source (gate.tamper uses it too)."""
DEFINES = re.compile(r"^\s*(?:function\s+([\w.:\[-]+)|([\w.:\[-]+)\s*\(\s*\))|^\s*alias\s+([\w.:\[-]+)=", re.M)
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
BUILD_FILES = frozenset({"Makefile", "makefile", "GNUmakefile", "package.json", "tox.ini", "setup.cfg",
                         "pyproject.toml"})
"""Build files a runner reads: what they name is the check's input, whoever edited them."""
LOOKUP_EXT = ("", ".js", ".cjs", ".mjs", ".json", "/index.js", ".pm", ".pl", ".sh", ".bash", ".rb")
"""What a require/use/source of a name without extension resolves to (node, perl, shell, ruby)."""
CODE_EXT = (".py", ".sh", ".bash", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".go", ".rs", ".c", ".h", ".java")


def _text(root: Path | None, rel: str) -> str:
    if root is None:
        return ""
    return (read_rel(root, rel, TEXT_CAP) or b"").decode("utf-8", "replace")


def _globbed(text: str, base: str, files: set[str]) -> set[str]:
    """Files a glob in `text` matches (`lib/*.sh`, `cases/*.txt`), from `base` or the top; `*` stays in a folder."""
    out: set[str] = set()
    for g in GLOB.findall(text):
        g = g.removeprefix("./")
        if not re.search(r"[\w-][./]|[./][\w-]", g):  # a bare `*` or `?` (arithmetic, `$?`) names no files
            continue
        for folder in (base, ""):
            pattern = posixpath.normpath(posixpath.join(folder, g))
            depth = pattern.count("/")
            out |= {f for f in files if f.count("/") == depth and fnmatch.fnmatchcase(f, pattern)}
            if len(out) > MAX_FILES:
                return out
    return out


TEMPLATE = re.compile(r"[\w./${}%-]*(?:\$\{?\w+\}?|\{\w*\}|%[sd])[\w./${}%-]*")
"""A path with a part filled in at run time: shell's `data/$f.txt`, `${dir}/expected.out`, Python's f"data/{n}.txt",
`"cases/%s.json"`."""
MARK = re.compile(r"\$\{?\w+\}?|\{\w*\}|%[sd]")
MAX_TEMPLATES = 40
"""Paths built at run time judged per file read (each is matched against every pre-run file)."""


_ORDERED: list[tuple[set[str], int, list[str]]] = []


def _ordered(files: set[str]) -> list[str]:
    """`files` sorted, for prefix ranges; kept for the set the gate passes call after call (the pre-run files, built
    once and not changed after): the same object (held here, so its id is not reused) of the same size."""
    last = _ORDERED[0] if _ORDERED else None
    if last is not None and last[0] is files and last[1] == len(files):
        return last[2]
    ordered = sorted(files)
    _ORDERED[:] = [(files, len(files), ordered)]
    return ordered


def _templated(text: str, base: str, files: set[str]) -> set[str]:
    """The files a path built at run time can name (`data/$f.txt`: every `data/*.txt`), where what is fixed in it
    says something: a folder and an extension, or a fixed name part beside the extension (`$f.expected`)."""
    out: set[str] = set()
    for token in sorted(set(TEMPLATE.findall(text[:200_000])))[:MAX_TEMPLATES]:
        token = token.strip("./")
        fixed = MARK.sub("", token)
        if "/" not in fixed.strip("/") and not re.search(r"\w\.\w+$", fixed) or len(fixed) < 4:
            continue
        if not re.search(r"\.\w+$", token) or token.startswith(("$", "{")) and "/" not in token:
            continue
        pieces = MARK.split(token)
        pattern = re.compile("[^/]*".join(re.escape(p) for p in pieces) + "$")
        ordered = _ordered(files)
        for folder in (base, ""):
            head = (f"{folder}/" if folder else "") + pieces[0]  # fixed text before the first filled-in part
            at = bisect.bisect_left(ordered, head)
            while at < len(ordered) and ordered[at].startswith(head):
                f = ordered[at]
                if f.endswith(pieces[-1]) and pattern.match(f[len(head) - len(pieces[0]):]):
                    out.add(f)
                at += 1
        if len(out) > 200:
            break
    return out


def _candidates(text: str, base: str, files: set[str]) -> set[str]:
    out = _globbed(text, base, files) | _templated(text, base, files)
    for tail in DYNAMIC.findall(text):  # the variable is the script's folder, its parent or the workspace top
        for folder in (base, posixpath.dirname(base), ""):
            rel = posixpath.normpath(posixpath.join(folder, tail.removeprefix("./")))
            if rel in files:
                out.add(rel)
    for w in WORD.findall(text):
        w = w.strip("./") if w.startswith("./") else w
        bare = "." not in posixpath.basename(w)
        for rel in (posixpath.normpath(posixpath.join(base, w)), posixpath.normpath(w)):
            for ext in LOOKUP_EXT if bare else ("",):
                if rel + ext in files:
                    out.add(rel + ext)
    return out


def _py_imports(text: str, base: str, files: set[str], strings: bool = True) -> set[str]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    mods: list[str] = []
    texts: list[str] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            mods += [a.name for a in n.names]
        elif isinstance(n, ast.ImportFrom) and n.module:
            mods += [n.module] + [f"{n.module}.{a.name}" for a in n.names]
        elif (isinstance(n, ast.Call) and n.args and isinstance(n.args[0], ast.Constant)
              and isinstance(n.args[0].value, str) and getattr(n.func, "attr", getattr(n.func, "id", "")) in (
                  "import_module", "__import__", "find_spec", "run_module")):
            mods.append(n.args[0].value)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and len(n.value) < 300:
            texts.append(n.value)
        elif isinstance(n, (ast.BinOp, ast.JoinedStr, ast.Call)) and (folded := _fold(n)) and len(folded) < 300:
            texts.append(folded)  # 'ca' + 'ses' + '.json', os.path.join(HERE, 'cases', 'ann.txt'), Path('a') / 'b'
    out = set()
    for m in mods:
        path = m.replace(".", "/")
        for folder in {base, ""}:
            for rel in (f"{path}.py", f"{path}/__init__.py"):
                rel = posixpath.normpath(posixpath.join(folder, rel))
                if rel in files:
                    out.add(rel)
    return out | (_candidates(" ".join(texts), base, files) if strings else set())


INCLUDE_LINE = re.compile(
    r"^.*(?:(?:^|[;&|({]\s*|\s)(?:source|\.)\s+\S|^\s*-?s?include\s|\brequire\s*\(|\bimport\s*\(|"
    r"\bfrom\s+['\"`]|^\s*import\s+['\"`]|^\s*(?:use|require)\s+[\w:]+|\bdo\s+['\"]).*$", re.M)
"""Lines that include another file: shell `source`/`.`, make `include`, node `require`/`import`, perl `use`/`do`."""


def _includes(text: str, base: str, created: set[str], python: bool = False) -> set[str]:
    """Files the run created that `text` includes (a build product the check merely names is not included)."""
    if not created:
        return set()
    if python:
        return _py_imports(text, base, created, strings=False)
    lines = "\n".join(m.group(0) for m in INCLUDE_LINE.finditer(text))
    lines += "\n" + " ".join(f"lib/{m.replace('::', '/')}.pm {m.replace('::', '/')}.pm"
                             for m in re.findall(r"^\s*(?:use|require)\s+([\w:]+)", text, re.M))
    return _candidates(lines, base, created)


def _created(start: dict[str, FileState], end: dict[str, FileState] | None) -> set[str]:
    """Files the run created that are not tests of its own (those are the run's proof, judged elsewhere)."""
    if end is None:
        return set()
    return {p for p, st in end.items() if p not in start and st.link is None and not _test_path(p)}


def _test_path(rel: str) -> bool:
    return is_test_path(rel)


def check_reads(
    command: str, start: dict[str, FileState], after: Path, before: Path | None,
    end: dict[str, FileState] | None = None,
) -> tuple[set[str], set[str]]:
    """(files the check reads, files it sources) among the pre-run files, followed a few levels deep; with `end`,
    also the files the run created that the check line, a test, a build file or a file the run left alone names
    (an optional include, `-include local.mk`, `try: import calc_local`): a file the run changed names what it
    likes, that is the change."""
    files = {p for p, st in start.items() if st.link is None}
    created = _created(start, end)
    files_all = files | created
    reads = _candidates(command, "", files) | _includes(command, "", created)
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
        left_alone = end is None or end.get(rel) == start.get(rel) or _test_path(rel) or rel in BUILD_FILES
        pool = files_all if left_alone else files
        for text in {_text(after, rel), _text(before, rel)}:
            found = _py_imports(text, base, files) if rel.endswith(".py") else _candidates(text, base, files)
            if left_alone:
                found |= _includes(text, base, created, rel.endswith(".py"))
            found |= {posixpath.normpath(posixpath.join(base, s.removeprefix("./"))) for s in SOURCED.findall(text)}
            sourced |= {posixpath.normpath(posixpath.join(base, s.removeprefix("./")))
                        for s in SOURCED.findall(text)} & pool
            todo += [f for f in found & pool if f not in seen]
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


def new_shadows(rel: str, after: Path, before: Path | None, words: frozenset[str] = SHELL_WORDS) -> list[str]:
    """Functions or aliases a sourced file newly defines that are named like a builtin or command (`words`)."""
    old = {next(g for g in m.groups() if g) for m in DEFINES.finditer(_text(before, rel))}
    out = []
    for m in DEFINES.finditer(_text(after, rel)):
        name = next(g for g in m.groups() if g)
        if name in words and name not in old:
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


def _holds_a_name(rel: str, goal: str, after: Path, before: Path | None) -> bool:
    """Whether a code file is where the goal's code names live (`mul` for "make mul(a, b) return ..."), before or
    after the run; a goal that names no code leaves every code file a candidate for the change."""
    names = [n for n in named_identifiers(goal, []) if len(n) > 1 and not n.startswith("-")]
    if not names:
        return True
    texts = _text(after, rel) + "\n" + _text(before, rel)
    return any(n in texts for n in names)


def input_changes(command: str, goal: str, named: list[str], start: dict[str, FileState],
                  end: dict[str, FileState], after: Path, before: Path | None) -> list[str]:
    """Review lines for the person's check `command`: inputs the run changed, shadows a sourced file defines."""
    reads, sourced = check_reads(command, start, after, before, end)
    targets = goal_targets(goal, named)
    out = []
    for rel in sorted(reads):
        if end.get(rel) == start.get(rel) or rel in start and not _build_change(rel, after, before):
            continue
        how = "deleted" if rel not in end else "changed" if rel in start else "created"
        if rel in sourced:
            for name in new_shadows(rel, after, before):
                out.append(f"tampering: {rel}, which your check `{command}` sources, now defines `{name}`, "
                           "a builtin or command the check runs")
        if _is_target(rel, targets) or (not named and rel.endswith(CODE_EXT)
                                        and _holds_a_name(rel, goal, after, before)):
            continue
        out.append(f"the run {how} {rel}, which your check `{command}` reads: the check's own input moved")
    return out


def project_created_inputs(goal: str, named: list[str], start: dict[str, FileState], end: dict[str, FileState],
                           after: Path, before: Path | None) -> list[str]:
    """Review lines for files the run created that the project's own tests (or their build files) load: an
    optional include that was absent before the run (`[ -f config.local.sh ] && . config.local.sh`,
    `try: import calc_local`, `-include local.mk`) is the tests' input, not the change, unless the goal names it."""
    tests = sorted(p for p in start if is_test_path(p) or posixpath.basename(p) in BUILD_FILES)[:MAX_FILES]
    if not tests:
        return []
    reads, _ = check_reads(" ".join(tests), start, after, before, end)
    targets = goal_targets(goal, named)
    return [f"the run created {rel}, which the project's tests load: the tests' own input moved"
            for rel in sorted(reads - set(start))
            if not _is_target(rel, targets) and not (not named and rel.endswith(CODE_EXT)
                                                     and _holds_a_name(rel, goal, after, before))]

