"""Does a `.pyc` the run left match its source? Python trusts the header; Tether compiles the source and compares.

Python imports `__pycache__/m.TAG.pyc` instead of compiling `m.py` when the
pyc's header matches the source (its mtime and size, or a hash), and never
looks at the code inside: a crafted pyc whose header copies the source's
stat runs code that no diff of `m.py` shows. `classify()` sorts the caches
a run added or changed:

- `stale`: Python would not use it (no source beside it in `__pycache__`, or
  a header that does not match the source): harmless, Python rebuilds it.
- `matches`: Python would use it and it is exactly the compiled source.
- `mismatch`: Python would use it and it is not the compiled source.
- `sourceless`: a `m.pyc` outside `__pycache__` with no `m.py` beside it
  (Python imports those directly).
- `unchecked`: Python (this version or another) would use it and Tether
  cannot compile the source for that version, or the check failed.

The code is compared in a child interpreter (`-I -S`, memory and time
bounded): `marshal.loads` is not safe against crafted data, so it never runs
in Tether's own process. Code objects compare equal regardless of the file
name compiled into them, so the sandbox's paths do not matter.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from collections.abc import Callable
from typing import Literal

Verdict = Literal["stale", "matches", "mismatch", "sourceless", "unchecked"]
MAX_PYC_BYTES = 8 << 20
"""A cache larger than this is not compared (`unchecked`)."""
CHECK_SECONDS = 60
_NAME = re.compile(r"^(?P<mod>[^/.]+)\.(?P<tag>[\w-]+?)(?:\.opt-(?P<opt>[12]))?\.pyc$")
_CHILD = r"""
import marshal, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
resource.setrlimit(resource.RLIMIT_CPU, (%d, %d))
buf, out = sys.stdin.buffer, []
while True:
    head = buf.read(9)
    if len(head) < 9:
        break
    pyc, src = buf.read(int.from_bytes(head[:4], "little")), buf.read(int.from_bytes(head[4:8], "little"))
    try:
        code = marshal.loads(pyc[16:])
        ref = compile(src, getattr(code, "co_filename", "<pyc>"), "exec", dont_inherit=True, optimize=head[8])
        out.append(b"M" if type(code) is type(ref) and code == ref else b"X")
    except BaseException:
        out.append(b"E")
sys.stdout.buffer.write(b"".join(out))
"""

Read = Callable[[str, int], "bytes | None"]
Stat = Callable[[str], "tuple[int, int] | None"]
"""rel -> (mtime in whole seconds, size) of a regular file, or None."""


def source_of(rel: str) -> tuple[str, int, bool] | None:
    """(source path, optimization level, in `__pycache__`) for a cache path; None when the name is not a cache's."""
    head, _, name = rel.rpartition("/")
    if head == "__pycache__" or head.endswith("/__pycache__"):
        m = _NAME.match(name)
        if m is None:
            return None
        parent = head[: -len("__pycache__")]
        return f"{parent}{m.group('mod')}.py", int(m.group("opt") or 0), True
    if name.endswith(".pyc"):
        return f"{head + '/' if head else ''}{name[:-4]}.py", 0, False
    return None


def _header_used(pyc: bytes, source: bytes | None, src_stat: tuple[int, int] | None) -> bool | None:
    """Whether this Python would load the cache for the source: True, False, or None (unchecked-hash: always)."""
    if len(pyc) < 16 or src_stat is None:
        return False
    flags = int.from_bytes(pyc[4:8], "little")
    if flags == 0:
        mtime, size = int.from_bytes(pyc[8:12], "little"), int.from_bytes(pyc[12:16], "little")
        return (mtime, size) == (src_stat[0] & 0xFFFFFFFF, src_stat[1] & 0xFFFFFFFF)
    if flags & 0b10 and source is not None:  # checked hash
        import _imp

        raw = int.from_bytes(importlib.util.MAGIC_NUMBER[:2], "little")
        return _imp.source_hash(raw, source) == pyc[8:16]
    return None


def classify(paths: list[str], read: Read, stat: Stat) -> dict[str, Verdict]:
    """A verdict for each cache path (workspace-relative), reading files through `read` and `stat`."""
    out: dict[str, Verdict] = {}
    todo: list[tuple[str, bytes, bytes, int]] = []
    for rel in paths:
        found = source_of(rel)
        if found is None:
            out[rel] = "unchecked"
            continue
        src_rel, opt, cached = found
        src_stat = stat(src_rel)
        if not cached:
            out[rel] = "stale" if src_stat is not None else "sourceless"
            continue
        pyc = read(rel, MAX_PYC_BYTES + 1) or b""
        source = read(src_rel, MAX_PYC_BYTES + 1) if src_stat is not None else None
        if src_stat is None or len(pyc) < 16:
            out[rel] = "stale"
            continue
        ours = pyc[:4] == importlib.util.MAGIC_NUMBER
        used = _header_used(pyc, source if ours else None, src_stat)
        if used is False:
            out[rel] = "stale"
        elif used is None or not ours or source is None or len(pyc) > MAX_PYC_BYTES or len(source) > MAX_PYC_BYTES:
            out[rel] = "unchecked"
        else:
            todo.append((rel, pyc, source, opt))
    out.update(_compare(todo))
    return out


def _compare(todo: list[tuple[str, bytes, bytes, int]]) -> dict[str, Verdict]:
    """Compile each source in a child interpreter and compare it with its cache's code."""
    if not todo:
        return {}
    payload = b"".join(len(p).to_bytes(4, "little") + len(s).to_bytes(4, "little") + bytes([o]) + p + s
                       for _, p, s, o in todo)
    try:
        child = _CHILD % (CHECK_SECONDS, CHECK_SECONDS)  # it bounds its own memory and CPU before reading anything
        done = subprocess.run([sys.executable, "-I", "-S", "-c", child], input=payload, capture_output=True,
                              timeout=CHECK_SECONDS, check=False)
        marks = done.stdout.decode("ascii", "replace")
    except (OSError, subprocess.SubprocessError):
        marks = ""
    names: dict[str, Verdict] = {"M": "matches", "X": "mismatch"}
    return {rel: names.get(marks[i:i + 1], "unchecked") for i, (rel, _, _, _) in enumerate(todo)}
