"""The gate's second look at the workspace and the sandbox: places, tampering, secrets.

Parts: `ChangeTracker` (changes no command made: seen between two commands,
or after the last), `outside_files()` (what the run left in the sandbox's
/tmp and /dev/shm) and `left_outside()` (its review line), `escaping_links()`, `artifact_types()` (lstat, never
following a link; a file holding only whitespace or a placeholder is no
artifact: `content_kind()`), `tampering()` (tests that existed before the run and were
edited, deleted, put back or stashed, with their diff) and `file_secrets()`
(whole changed files and new `.git` objects, within a byte budget).
"""

from __future__ import annotations

import bz2
import difflib
import gzip
import io
import lzma
import os
import posixpath
import re
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tether.common.manifest import FileState, diff
from tether.common.snapshot import SNAPSHOT_DIR
from tether.common.walk import Deadline, WalkError, read_rel, shown, walk
from tether.gate.evidence import CommandEvidence, is_generated, real_changes
from tether.gate.rerun import is_test_path
from tether.gate.secrets import scan_bytes
from tether.sandbox.base import Sandbox

OUTSIDE_PROBE = "find /tmp /dev/shm -xdev ! -type d 2>/dev/null | head -n 200; true"
OUTSIDE_IGNORED = re.compile(
    r"^/tmp/(\.cache/|pytest-of-|\.pytest_cache|__pycache__)|\.pyc$"
    r"|^/tmp/\.npm/(_logs/[\w.:-]+-debug(-\d+)?\.log|_update-notifier-last-checked|_cacache/|_npx/|anonymous-cli-metrics)"
    r"|^/tmp/(\.yarn/|\.yarnrc$|\.node-gyp/|\.config/configstore/update-notifier-[\w-]+\.json$|\.local/share/pnpm/)"
)
"""Tool caches (pip's under .cache, npm's own logs and update stamp, yarn, node-gyp) are no work left behind. The
gate's own HOME is no longer here: its re-run runs in sandboxes of its own, so a /tmp/.tether-* in the run's
sandbox is the run's."""
FILE_BUDGET = 4 << 20
TOTAL_BUDGET = 24 << 20
DIFF_CAP = 20_000
ARTIFACT_READ = 1 << 20
BLANK_CHARS = "\ufeff\u200b\u200c\u200d\u2060\u00a0\t\n\r\x0b\x0c "
PLACEHOLDER_TEXT = re.compile(
    r"(?i)^(?:#+|//+|--|;+|/\*+|<!--|\*+)?\s*(?:todo|tbd|tba|fixme|xxx|wip|placeholder|stub|coming soon|"
    r"lorem ipsum|to be (?:done|written|filled in)|not (?:yet )?implemented|\.\.\.|…)(?:[\s:.!-].*)?$"
)
"""A whole artifact that only promises content: `TODO`, `# TBD`, `placeholder`, `lorem ipsum dolor`, `...`."""
NO_OP_BODY = re.compile(
    r"(?i)^(?:exit(?:\s+0)?|true|:|pass|return(?:\s+0)?|\.\.\.|(?:sys\.)?exit\(0?\)|process\.exit\(0?\)|"
    r"module\.exports\s*=\s*\{\s*\};?|int main\(\w*\)\s*\{\s*(?:return 0;)?\s*\}|set -e(?:u|uo pipefail)?)"
    r"\s*;?$"
)
"""A script body that does nothing and succeeds (`exit 0`, `true`, `:`, `pass`): a stub, not the asked-for program."""
COMMENT_LINE = re.compile(r"^\s*(?:#|//|--(?!\w)|;)")
STASH = re.compile(r"\bgit\b[^;&|\n]*\bstash\b(?!\s+(list|show)\b)")
SHADOWED = frozenset(
    "abc argparse ast atexit binascii bisect bz2 codecs collections contextlib copy copyreg dataclasses difflib dis "
    "encodings enum errno fnmatch functools genericpath gettext heapq importlib inspect io ipaddress itertools keyword "
    "linecache locale lzma marshal math opcode operator os pathlib posix posixpath pprint random re reprlib runpy "
    "shutil "
    "signal site sitecustomize stat struct tempfile textwrap threading time token tokenize traceback types typing "
    "unittest urllib usercustomize warnings weakref zipfile zipimport zlib doctest pytest _pytest pluggy py iniconfig "
    "packaging exceptiongroup tomli".split()
)
"""Modules `python -m unittest` (CPython 3.11, measured with -X importtime) and pytest import before any test runs."""
HOOK_FILES = re.compile(r"(^|/)(sitecustomize|usercustomize)\.py$|\.pth$")


def _states(scan: Any) -> dict[str, FileState]:
    """A manifest, from a `common.manifest.Scan` or a manifest itself."""
    return getattr(scan, "states", scan)


class ChangeTracker:
    """Remembers the scan after each command; a later difference no command made is a stray change.

    `changed` compares two scans (the runner passes `WorkspaceWatch.changed`,
    which knows that live scans are views, not copies); by default manifests
    are diffed in full.
    """

    def __init__(self, changed: Callable[[Any, Any], list[str]] | None = None) -> None:
        self.last: Any = None
        self.changed = changed or (lambda a, b: [shown(p) for p in diff(_states(a), _states(b)).changed])

    def stray(self, now: Any) -> list[str]:
        """Changes since the last command ended, without caches, as journal-safe text (call before the next command)."""
        return [] if self.last is None else real_changes(self.changed(self.last, now))

    def command_changes(self, before: Any, after: Any) -> list[str]:
        """One command's own changes (caches left out); remembers `after` for the next `stray`."""
        self.last = after
        return real_changes(self.changed(before, after))


def outside_files(sandbox: Sandbox) -> list[str] | None:
    """Files and links under the sandbox's /tmp and /dev/shm (tool caches left out); None when unlisted."""
    try:
        res = sandbox.exec(OUTSIDE_PROBE, timeout_s=20)
    except Exception:  # a dead sandbox lists nothing: R09 fails on None
        return None
    if res.exit_code != 0:
        return None
    return [line for line in res.output.splitlines() if line.startswith("/") and not OUTSIDE_IGNORED.search(line)]


def left_outside(files: Sequence[str], shown_at_most: int = 10) -> list[str]:
    """The review line for what a run left in the sandbox's /tmp and /dev/shm (none when it left nothing).

    Scratch folders there vanish with the sandbox and reach nothing of the
    person's, so they fail nothing; but work that belongs in the workspace may
    be among them, so a person looks at the list before the run counts.
    """
    if not files:
        return []
    more = f" ({len(files)} in all)" if len(files) > shown_at_most else ""
    return [
        "the run left files outside the workspace, in the sandbox's /tmp or /dev/shm (gone with the sandbox): "
        + ", ".join(files[:shown_at_most])
        + more
    ]


def escaping_links(end: dict[str, FileState], mount: str) -> list[str]:
    """Workspace symlinks whose target is outside the workspace (absolute elsewhere, or `..` past the root)."""
    out = []
    root = mount.rstrip("/")
    for rel, st in end.items():
        if st.link is None:
            continue
        target = st.link
        if target.startswith("/"):
            inside = posixpath.normpath(target).startswith(root + "/")
        else:
            inside = not posixpath.normpath(posixpath.join(posixpath.dirname(rel), target)).startswith("..")
        if not inside:
            out.append(f"{rel} -> {target}")
    return sorted(out)


def artifact_types(workspace: Path, artifacts: Sequence[str], mount: str) -> dict[str, str]:
    """Each artifact's type by lstat of every component: file, empty, symlink, dir, missing, outside, other."""
    out: dict[str, str] = {}
    for name in artifacts:
        rel = name.removeprefix(mount.rstrip("/") + "/").removeprefix("./")
        rel = posixpath.normpath(rel)
        if rel.startswith(("../", "/")) or rel == "..":
            out[name] = "outside"
            continue
        path, kind = workspace, "missing"
        for i, part in enumerate(rel.split("/")):
            path = path / part
            try:
                st = os.lstat(path)
            except OSError:
                kind = "missing"
                break
            last = i == rel.count("/")
            if stat.S_ISLNK(st.st_mode):
                kind = "symlink"
                break
            if not last:
                if not stat.S_ISDIR(st.st_mode):
                    break
                continue
            kind = (
                ("file" if st.st_size else "empty")
                if stat.S_ISREG(st.st_mode)
                else "dir"
                if stat.S_ISDIR(st.st_mode)
                else "other"
            )
            if kind == "file":
                kind = content_kind(read_rel(workspace, rel, ARTIFACT_READ) or b"")
            if kind == "file" and ARCHIVE.search(rel):
                kind = archive_kind(read_rel(workspace, rel, ARCHIVE_READ) or b"")
        out[name] = kind
    return out


def content_kind(data: bytes) -> str:
    """`blank` (only whitespace, NULs, byte-order marks, zero-width spaces), `placeholder` (a lone TODO, TBD,
    FIXME, lorem ipsum, ..., or a lone `#!` line: a script with no body), else `file`; judged on the file's
    first ARTIFACT_READ bytes."""
    for bom in (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"):
        data = data.removeprefix(bom)
    text = data.decode("utf-8", errors="replace").replace("\x00", "")
    text = text.strip().strip(BLANK_CHARS).strip()
    if not text:
        return "blank"
    if len(text) <= 80 and "\n" not in text and (PLACEHOLDER_TEXT.match(text) or text.startswith("#!")):
        return "placeholder"
    body = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#!")
            and not COMMENT_LINE.match(line)]
    if len(text) <= 400 and body and all(NO_OP_BODY.match(line) for line in body):
        return "placeholder"  # `#!/bin/sh` + `exit 0`: a stub that succeeds and does nothing
    return "file"


ARCHIVE = re.compile(r"\.(?:tar|tar\.gz|tgz|tar\.bz2|tbz2?|tar\.xz|txz|zip|whl|jar)$", re.I)
ARCHIVE_READ = 8 << 20
ARCHIVE_UNPACKED = 64 << 20
ARCHIVE_MEMBERS = 2000


class _Bounded(io.RawIOBase):
    """A decompressed stream that stops at ARCHIVE_UNPACKED bytes (a bomb is not unpacked to be judged)."""

    def __init__(self, inner: io.BufferedIOBase) -> None:
        self._inner, self._left = inner, ARCHIVE_UNPACKED

    def readable(self) -> bool:
        return True

    def readinto(self, b: bytearray) -> int:  # type: ignore[override]
        if self._left <= 0:
            msg = "archive too large to judge"
            raise OSError(msg)
        data = self._inner.read(min(len(b), self._left))
        self._left -= len(data)
        b[:len(data)] = data
        return len(data)


def archive_kind(data: bytes) -> str:
    """An archive the goal names whose every file is blank (`blank`) or a placeholder (`placeholder`): a tarball of
    an empty calc.py is no artifact. Anything that cannot be read within the bounds is judged a `file`."""
    kinds: list[str] = []
    try:
        if data[:4] == b"PK\x03\x04":
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                for info in z.infolist()[:ARCHIVE_MEMBERS]:
                    if not info.is_dir():
                        with z.open(info) as f:
                            kinds.append(content_kind(f.read(ARTIFACT_READ)))
        else:
            raw = io.BytesIO(data)
            opener = {b"\x1f\x8b": lambda f: gzip.GzipFile(fileobj=f), b"BZ": bz2.BZ2File,
                      b"\xfd7": lzma.LZMAFile}.get(data[:2])
            inner = io.BufferedReader(_Bounded(opener(raw) if opener else raw))
            with tarfile.open(fileobj=inner, mode="r|") as t:
                for n, member in enumerate(t):
                    if n >= ARCHIVE_MEMBERS:
                        break
                    if member.isreg():
                        f = t.extractfile(member)
                        kinds.append(content_kind(f.read(ARTIFACT_READ) if f else b""))
    except (OSError, EOFError, tarfile.TarError, zipfile.BadZipFile, lzma.LZMAError, ValueError):
        return "file"
    if not kinds or "file" in kinds:
        return "file"
    return "blank" if all(k == "blank" for k in kinds) else "placeholder"


def _snapshot_text(run_dir: Path, rel: str) -> str:
    data = read_rel(run_dir / SNAPSHOT_DIR / "files", rel, DIFF_CAP)
    return (data or b"").decode("utf-8", errors="replace")


def _text(root: Path, rel: str) -> str:
    return (read_rel(root, rel, DIFF_CAP) or b"").decode("utf-8", errors="replace")


ADDED_RISK = re.compile(r"(?i)skip|xfail|expectedfailure|setup|teardown|fixture|pytest_|monkeypatch|mock|patch|"
                        r"sys\.|os\.|atexit|builtins|__eq__|__ne__|setattr|globals\(|exec\(|eval\(|^\s*import\b|"
                        r"^\s*from\b|=\s*lambda|^(?!(async\s+)?def test_\w*\(|class Test\w*[(:])\S")
"""Added lines that could neuter or redefine the old tests rather than add new ones (module-level code included)."""
DEFINED = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+(\w+)", re.M)


PLAIN_IMPORT = re.compile(r"^(\s*)(?:from\s+([A-Za-z_][\w.]*)\s+import\s+\(?\s*([\w\s,]+?)\s*\)?|"
                          r"import\s+([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*))\s*$")
"""`from calc import add, mul` or `import calc`: no star, no alias (an alias could rebind an old test's name)."""
RISKY_MODULES = re.compile(r"^(unittest|pytest|_pytest|sys|os|builtins|importlib|atexit|ctypes|gc|inspect|mock|"
                           r"conftest|doctest|signal|faulthandler|threading|subprocess|runpy|types|functools)(\.|$)")


def _imported(line: str) -> tuple[str, set[str]] | None:
    """The module and names of a plain import line of code under test; None for any other line."""
    m = PLAIN_IMPORT.match(line)
    if not m:
        return None
    if m.group(4):
        mods = [x.strip() for x in m.group(4).split(",")]
        return (None if any(RISKY_MODULES.match(x) for x in mods) else ("", {x.split(".")[0] for x in mods}))
    if RISKY_MODULES.match(m.group(2)) or " as " in m.group(3):
        return None
    return m.group(2), {x.strip() for x in m.group(3).split(",") if x.strip()}


def _wider_import(old_lines: list[str], new_lines: list[str]) -> bool:
    """A replaced import line that imports what it did and more from the same module (`from calc import add` ->
    `from calc import add, mul`): the usual way to extend a test file."""
    olds, news = [_imported(x) for x in old_lines], [_imported(x) for x in new_lines]
    if None in olds or None in news or len(olds) != len(news):
        return False
    return all(o[0] == n[0] and o[1] <= n[1] for o, n in zip(olds, news, strict=True))  # type: ignore[index]


def _only_adds_tests(old: str, new: str) -> bool:
    """Every old line kept in order (an import line may import more from the same module), and the added lines are
    new test bodies only (indented, no risky word, no name the file already defined: a second `def test_mul` would
    replace the first), or plain imports of code under test that bind no name the file already had."""
    a, b = old.splitlines(), new.splitlines()
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    if any(tag == "delete" or tag == "replace" and not _wider_import(a[i1:i2], b[j1:j2])
           for tag, i1, i2, j1, j2 in ops):
        return False
    added = [line for tag, _, _, j1, j2 in ops if tag == "insert" for line in b[j1:j2]]
    old_names = set(DEFINED.findall(old))
    imports = [_imported(line) for line in added if PLAIN_IMPORT.match(line)]
    if any(i is None or i[1] & old_names for i in imports):
        return False
    if any(ADDED_RISK.search(line) for line in added if line.strip() and not PLAIN_IMPORT.match(line)):
        return False
    widened = [n for tag, _, _, j1, j2 in ops if tag == "replace" for x in b[j1:j2]
               for n in (_imported(x) or ("", set()))[1]]
    return not old_names & ({*DEFINED.findall("\n".join(added)), *widened})


def tampering(
    start: dict[str, FileState],
    end: dict[str, FileState],
    commands: Sequence[CommandEvidence],
    run_dir: Path,
    workspace: Path,
    additions_ok: Sequence[str] = (),
) -> tuple[list[str], str]:
    """Reasons a person must review (tests that existed before, touched by the run) and their diff. A test file in
    `additions_ok` (the goal asks for tests in it) may gain new tests: an edit that only adds lines, defines no
    name the file already had and adds no skip, fixture or patch is the change, not tampering."""
    before_tests = {p for p in start if is_test_path(p) and not is_generated(p)}
    reasons: list[str] = []
    extended = {p for p in additions_ok if p in before_tests and p in end and end[p] != start[p]
                and _only_adds_tests(_snapshot_text(run_dir, p), _text(workspace, p))}
    touched = sorted(p for p in before_tests - extended if end.get(p) != start[p])
    for p in touched:
        reasons.append(f"test {p} {'deleted' if p not in end else 'edited'} by the run")
    during = sorted({p for c in commands for p in c.changed} & before_tests - set(touched) - extended)
    if during:
        reasons.append(f"tests changed during the run, then put back: {', '.join(during[:5])}")
        touched += during
    stash = [c.command for c in commands if c.executed and STASH.search(c.command)]
    if stash:
        reasons.append(f"`{stash[0][:80]}` can hide changes to tests")
    chunks: list[str] = []
    for p in touched:
        old = _snapshot_text(run_dir, p).splitlines(keepends=True)
        new = _text(workspace, p).splitlines(keepends=True) if p in end else []
        chunks.extend(difflib.unified_diff(old, new, f"a/{p}", f"b/{p}"))
    return reasons, "".join(chunks)[:DIFF_CAP]


def shadowing(start: dict[str, FileState], end: dict[str, FileState]) -> list[str]:
    """Files the run added or changed at the workspace top level that shadow a module a checker imports.

    `python -m unittest` and pytest put the workspace first on sys.path, so a
    `unittest/` or `re.py` there replaces the real one for every test.
    """
    out = set()
    for rel, st in end.items():
        if start.get(rel) == st or is_generated(rel):
            continue
        top = rel.split("/", 1)[0]
        name = top[:-3] if top.endswith(".py") and "/" not in rel else top if "/" in rel else ""
        if name in SHADOWED or HOOK_FILES.search(rel):
            out.add(top if "/" in rel else rel)
    return sorted(out)


def file_secrets(workspace: Path, changed: Sequence[str], since_ns: int, deadline_s: float = 30.0) -> list[str]:
    """Secrets in files the run added or changed, and in `.git` files written since the run began.

    Read by descriptor (no link followed), at most FILE_BUDGET bytes a file
    and TOTAL_BUDGET in all; loose git objects are inflated first.
    """
    hits: list[str] = []
    budget = TOTAL_BUDGET
    paths = [p for p in changed if not is_generated(p)]
    git = workspace / ".git"
    if git.is_dir() and not git.is_symlink():
        try:
            for e in walk(git, deadline=Deadline(deadline_s, "secrets scan of .git")):
                if e.kind == "file" and e.st.st_mtime_ns >= since_ns:
                    paths.append(".git/" + e.rel)
        except (OSError, WalkError) as err:
            hits.append(f".git could not be scanned: {err}")
    for rel in paths:
        if budget <= 0:
            hits.append(f"secret scan stopped at its {TOTAL_BUDGET >> 20} MiB budget")
            break
        data = read_rel(workspace, rel, min(FILE_BUDGET, budget)) or b""
        budget -= len(data)
        if rel.startswith(".git/objects/") and data[:1] == b"x":
            try:
                data = zlib.decompressobj().decompress(data, FILE_BUDGET)
            except zlib.error:
                pass
        hits.extend(f"{shown(rel)}: {kind}" for kind in scan_bytes(data))
    return hits
