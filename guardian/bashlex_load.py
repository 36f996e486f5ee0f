"""Import bashlex without rebuilding its parser tables on every start.

bashlex's bundled PLY rebuilds the LALR tables of its grammar each time
`bashlex.parser` is imported (about 0.1 s, most of a `tether guard` start).
The tables depend only on bashlex's grammar, so they are built once and
shipped in `guardian/bashlex_tables.json`, keyed by the size and CRC of bashlex's
own `parser.py` and `yacc.py`. When they differ (another bashlex version),
bashlex is imported the ordinary way: slower, never wrong.

Parts:
    bashlex: the package, imported on first use (use `from guardian.bashlex_load import bashlex`);
        `bashlex.errors` alone loads only that module.
    signature: what the shipped tables must match.
    build_tables: the tables as PLY builds them (for the generator and the test).
    main: `python -m tether.guardian.bashlex_load` rewrites guardian/bashlex_tables.json.

JSON rather than a Python module: it loads in about a millisecond whether or
not bytecode caches can be written.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from typing import Any


_TABLES = Path(__file__).with_name("bashlex_tables.json")


def _package_dir() -> Path:
    spec = importlib.util.find_spec("bashlex")
    if spec is None or not spec.submodule_search_locations:
        msg = "bashlex is not installed"
        raise ImportError(msg)
    return Path(next(iter(spec.submodule_search_locations)))


def signature() -> str:
    """Size and CRC-32 of bashlex's parser.py and yacc.py: what the tables were built from
    (zlib's CRC is cheaper to import and compute than hashlib, and this is no security check:
    any mismatch only costs the slow build)."""
    import zlib  # only when bashlex is imported (the first line that needs its parser)

    parts = []
    for name in ("parser.py", "yacc.py"):
        data = (_package_dir() / name).read_bytes()
        parts.append(f"{name}:{len(data)}:{zlib.crc32(data):08x}")
    return " ".join(parts)


class _Production:
    """What LRParser reads of a production: name, length and the bound callable."""

    __slots__ = ("callable", "func", "len", "name", "str")

    def __init__(self, name: str, length: int, func: str | None, text: str) -> None:
        self.name, self.len, self.func, self.str = name, length, func, text
        self.callable = None

    def bind(self, pdict: dict[str, Any]) -> None:
        if self.func:
            self.callable = pdict[self.func]


class _Tables:
    def __init__(self, tables: dict[str, Any]) -> None:
        self.lr_action = {int(k): v for k, v in tables["action"].items()}
        self.lr_goto = {int(k): v for k, v in tables["goto"].items()}
        self.lr_productions = [_Production(*p) for p in tables["productions"]]


class _OnUse:
    """Stands in for a module while bashlex's PLY is imported: the real one is imported on first attribute use.

    PLY imports `inspect` (with `ast`, `dis`, `tokenize`: ~5 ms, a fifth of a hook call's start-up) only to read
    grammar sources when it builds tables, which the shipped ones replace.
    """

    __spec__ = None  # what the import system reads of an entry in sys.modules; the real module is not touched

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)


def _json_tables() -> dict[str, Any]:
    import json  # only without the marshal copy: the hook and the guard start without json

    return json.loads(_TABLES.read_text())


def _read_tables() -> dict[str, Any]:
    """The shipped tables; from a marshal copy in the start-up cache folder when the hook keeps one
    (`common.rxcache.folder`): parsing the JSON is most of bashlex's start-up. Keyed by the JSON file's
    size and mtime; the signature check below applies to either form."""
    import marshal
    import os

    from tether.common import rxcache

    where = rxcache.folder()
    if where is None:
        return _json_tables()
    st = _TABLES.stat()
    copy = os.path.join(where, f"bashlex-tables-{st.st_size}-{st.st_mtime_ns}.marshal")
    raw = rxcache.read_private(copy)
    if raw is not None:
        try:
            tables = marshal.loads(raw)
            if isinstance(tables, dict) and {"signature", "action", "goto", "productions"} <= set(tables):
                return tables
        except Exception:  # noqa: BLE001, S110 - torn or foreign: read the JSON again
            pass
    tables = _json_tables()
    rxcache.write_private(copy, marshal.dumps(tables))
    return tables


def _fast_import() -> ModuleType:
    tables = _read_tables()
    if tables["signature"] != signature():
        msg = "shipped bashlex tables do not match the installed bashlex"
        raise ImportError(msg)
    spec = importlib.util.find_spec("bashlex")
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules["bashlex"] = package
    stand_in = None if "inspect" in sys.modules else _OnUse("inspect")
    if stand_in is not None:
        sys.modules["inspect"] = stand_in  # type: ignore[assignment]
    try:
        yacc = importlib.import_module("bashlex.yacc")
    finally:
        if stand_in is not None and sys.modules.get("inspect") is stand_in:
            del sys.modules["inspect"]  # whoever imports inspect next gets the real one

    def from_tables(**_: object) -> object:
        lr = _Tables(tables)
        pdict = yacc.get_caller_module_dict(2)
        for p in lr.lr_productions:
            p.bind(pdict)
        return yacc.LRParser(lr, pdict.get("p_error"))

    original = yacc.yacc
    yacc.yacc = from_tables
    try:
        spec.loader.exec_module(package)
    finally:
        yacc.yacc = original
    return package


def _load() -> ModuleType:
    if "bashlex.parser" in sys.modules:
        return sys.modules["bashlex"]
    try:
        package = _fast_import()
    except Exception:  # any mismatch: forget the half-import, build the slow way
        for name in [n for n in sys.modules if n == "bashlex" or n.startswith("bashlex.") and n != "bashlex.errors"]:
            del sys.modules[name]  # bashlex.errors stays: its ParsingError is the one the guardian catches
        package = importlib.import_module("bashlex")
    if getattr(package, "errors", None) is not sys.modules["bashlex.errors"]:
        package.errors = sys.modules["bashlex.errors"]  # loaded on its own before the package (`_errors`)
    return package


def _errors() -> ModuleType:
    """`bashlex.errors` alone (one exception class, no imports), without the parser: the modules that catch its
    ParsingError are imported by lines that never need bashlex (`prepare.fast_split` reads those)."""
    found = sys.modules.get("bashlex.errors")
    if found is not None:
        return found
    spec = importlib.util.spec_from_file_location("bashlex.errors", _package_dir() / "errors.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return sys.modules.setdefault("bashlex.errors", module)


class _OnFirstUse:
    """bashlex, imported on first use (its parser is ~6 ms of a `tether guard` start, and the plain lines most
    agents run are split without it); `.errors` alone does not import the parser. After the first use it is
    the module's own attributes."""

    def __getattr__(self, name: str) -> Any:
        if name == "errors":
            return _errors()
        module = _load()
        self.__dict__.update(vars(module))  # from now on plain attribute reads
        return getattr(module, name)


def build_tables() -> tuple[dict, dict, list]:
    """(action, goto, productions) exactly as bashlex's PLY builds them."""
    import bashlex.parser as parser
    from bashlex import yacc

    pinfo = yacc.ParserReflect(vars(parser), log=yacc.NullLogger())
    pinfo.get_all()
    pinfo.validate_all()
    grammar = yacc.Grammar(pinfo.tokens)
    for term, assoc, level in pinfo.preclist:
        grammar.set_precedence(term, assoc, level)
    for funcname, gram in pinfo.grammar:
        file, line, prodname, syms = gram
        grammar.add_production(prodname, syms, funcname, file, line)
    grammar.set_start(pinfo.start)
    lr = yacc.LRTable(grammar, yacc.NullLogger())
    prods = [(p.name, p.len, p.func, p.str) for p in lr.lr_productions]
    return lr.lr_action, lr.lr_goto, prods


def tables_json() -> str:
    """The JSON text of the tables for the installed bashlex."""
    import json

    action, goto, prods = build_tables()
    return json.dumps({"signature": signature(), "action": action, "goto": goto,
                       "productions": prods}, separators=(",", ":")) + "\n"


def main() -> None:
    """Write guardian/bashlex_tables.json for the installed bashlex."""
    _TABLES.write_text(tables_json())
    print(f"wrote {_TABLES} ({_TABLES.stat().st_size} bytes)")


bashlex: Any = _OnFirstUse()
"""The bashlex package, imported on first attribute use other than `.errors`."""

if __name__ == "__main__":
    main()
