"""Compiled regular expressions kept between processes: a new `tether hook`/`tether guard` process does
not recompile the ~200 patterns the guardian builds at import (about a third of its start-up).

Parts:
    enable(folder): from now on, this process's `re` rebuilds a pattern already in the folder's cache file
        from its stored compiled form (`_sre.compile`, the call `re` itself ends with), skipping the parse
        and the code generation; a pattern not in it is compiled as `re` does, and added when it is one of
        Tether's own: compiled while one of its modules (or bashlex) is imported, or inside `static()`.
        Patterns built at run time (a command's globs through fnmatch) or by other packages (tokenize's,
        whose text changes with the hash seed) are compiled as usual and never kept, so the file does
        not grow with the commands judged.
    static(): a context in which compiled patterns are kept as if compiled at import (`guardian.lazy_re`).
    save(): write the file back when something was added (atomically, 0600); call it after the answer.
    compiled_form(pattern, flags): what is stored for one pattern (the arguments of `_sre.compile`).

The cache changes speed, never a match: the stored form is what `re` produced for the same pattern string
and flags on the same interpreter build (the file name carries the Python version, `_sre.MAGIC` and
`CODESIZE`), and any error reading the file or rebuilding a pattern (a torn file, a foreign one, a Python
whose internals differ) falls back to plain compilation. Trust: the file is read only from a folder owned
by this user and closed to others, in Tether's home, beside the trust ledger; bytes a process of the same
uid could write there are no worse than the installed code itself (whose bytecode caches Python loads the
same way), and the hook denies an agent's call that touches Tether's home (HOOK-001). The file is
marshal data (never pickle), and only entries of the expected shape are used.
"""

from __future__ import annotations

import _sre
import marshal
import os
import stat
import sys
from re import _compiler, _parser

MAX_ENTRIES = 4096
"""Past this many patterns the file keeps only those this process used (commands can add glob patterns)."""
MAX_PATTERN = 20_000
"""Longer pattern strings are compiled every time, never stored."""
MAX_BYTES = 16 << 20
"""A larger file is ignored (and rewritten from this process's patterns)."""
TAG = f"re-{sys.implementation.name}-{sys.version_info[0]}.{sys.version_info[1]}.{sys.version_info[2]}-" \
      f"{_sre.MAGIC}-{_sre.CODESIZE}.marshal"
"""The file name: one file per interpreter build, so a compiled form is only ever read by the `re` that made it."""

_table: dict[tuple[str, int], tuple[object, ...]] = {}
_used: set[tuple[str, int]] = set()
_state: dict[str, object] = {"path": None, "dirty": False, "original": None, "static": 0}


def compiled_form(pattern: str, flags: int) -> tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]:
    """The arguments `re._compiler.compile` passes to `_sre.compile` after `pattern` (the same steps)."""
    p = _parser.parse(pattern, flags)
    code = _compiler._code(p, flags)  # noqa: SLF001 - the step `re` itself runs; see the module docstring
    groupindex = p.state.groupdict
    indexgroup: list[str | None] = [None] * p.state.groups
    for k, i in groupindex.items():
        indexgroup[i] = k
    return (int(flags | p.state.flags), [int(c) for c in code], p.state.groups - 1, dict(groupindex),
            tuple(indexgroup))


def _compile(p: object, flags: int = 0) -> object:
    """`re._compiler.compile` with the cache in front (str patterns only; anything odd goes the usual way)."""
    original = _state["original"]
    if not isinstance(p, str) or flags & _compiler.SRE_FLAG_DEBUG or len(p) > MAX_PATTERN:
        return original(p, flags)  # type: ignore[operator]
    key = (p, int(flags))
    form = _table.get(key)
    if form is not None:
        try:
            rx = _sre.compile(p, *form)
            _used.add(key)
            return rx
        except Exception:  # a foreign or damaged entry: compile it afresh below  # noqa: BLE001, S110
            pass
    if not (_state["static"] or _importing()):
        return original(p, flags)  # type: ignore[operator]  # built at run time (globs of a command): not kept
    try:
        form = compiled_form(p, key[1])
        rx = _sre.compile(p, *form)
    except Exception:  # noqa: BLE001 - an internal that differs: plain compilation, nothing stored
        return original(p, flags)  # type: ignore[operator]
    _table[key] = form
    _used.add(key)
    _state["dirty"] = True
    return rx


def _importing() -> bool:
    """Whether the pattern is one of Tether's (or bashlex's) own, built while its module is imported: the code
    that called `re` and every caller out to a `<module>` frame belong to their modules.

    A pattern another package builds (tokenize's, whose text changes with the hash seed, even when a Tether
    module's import set it off), or one built while judging a command (a glob through fnmatch), is not.
    """
    frame = sys._getframe(2)  # noqa: SLF001 - only on a cache miss
    while frame is not None and frame.f_globals.get("__name__") == "re":
        frame = frame.f_back
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if not (isinstance(name, str) and name.startswith(("tether.", "bashlex"))):
            return False
        if frame.f_code.co_name == "<module>":
            return True
        frame = frame.f_back
    return False


class static:  # noqa: N801 - used as `with rxcache.static():`
    """Patterns compiled inside are kept like those compiled at import (`guardian.lazy_re` compiles on first use)."""

    def __enter__(self) -> None:
        _state["static"] = int(_state["static"]) + 1  # type: ignore[call-overload]

    def __exit__(self, *exc: object) -> None:
        _state["static"] = int(_state["static"]) - 1  # type: ignore[call-overload]


def _private_folder(folder: str) -> bool:
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def read_private(path: str, limit: int = MAX_BYTES) -> bytes | None:
    """The bytes of `path` when it is a regular file of this user's that no one else can write (None otherwise)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022 or st.st_size > limit:
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def write_private(path: str, data: bytes) -> None:
    """Replace `path` with `data` (0600, atomically; errors dropped: what is written here is only a cache)."""
    tmp = f"{path}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def folder() -> str | None:
    """The cache folder `enable` accepted (None when the cache is off): other start-up caches keep files there."""
    path = _state["path"]
    return os.path.dirname(path) if isinstance(path, str) else None


def _read(path: str) -> dict[tuple[str, int], tuple[object, ...]]:
    raw = read_private(path)
    if raw is None:
        return {}
    try:
        data = marshal.loads(raw)
    except Exception:  # noqa: BLE001 - torn or foreign: start empty
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items()
            if type(k) is tuple and len(k) == 2 and type(k[0]) is str and type(k[1]) is int
            and type(v) is tuple and len(v) == 5}


def enable(folder: str) -> None:
    """Use (and later `save` to) the cache file in `folder` (created 0700 when missing); no-op when that folder
    is not this user's private folder, or when enabled already."""
    if _state["original"] is not None:
        return
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError:
        return
    if not _private_folder(folder):
        return
    path = os.path.join(folder, TAG)
    _table.update(_read(path))
    _state["path"], _state["original"] = path, _compiler.compile
    _compiler.compile = _compile  # re._compile looks it up on the module at each miss of its own cache


def disable() -> None:
    """Stop using the cache (compilation goes back to `re`'s own); what was added stays until `save`."""
    if _state["original"] is not None:
        _compiler.compile = _state["original"]  # type: ignore[assignment]
        _state["original"] = None


def save() -> None:
    """Write the cache file when this process added a pattern (errors dropped: it is only a cache)."""
    path = _state["path"]
    if not _state["dirty"] or not isinstance(path, str):
        return
    keep = _table if len(_table) <= MAX_ENTRIES else {k: _table[k] for k in _used}
    try:
        data = marshal.dumps(keep)
    except ValueError:
        return
    write_private(path, data)
    _state["dirty"] = False
