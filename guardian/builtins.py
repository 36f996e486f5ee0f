"""Builtins that change the walker's state for later commands in the same line.

Parts:
    track: argv (+ the command's literal stdin) -> updates State:
        `cd`/`pushd`; `export`/`declare`/`typeset`/`local`/`readonly`
        assignments, `-n` namerefs; `read`/`mapfile`/`readarray` (the values
        read from a literal here-string or heredoc, else unknown); `printf -v`
        (the formatted text when format and arguments are literal); `set --`
        and `shift` (positional parameters); `((..))` assignments; `getopts`;
        `unset`.

A value read from anywhere else (a pipe, a file, the terminal) is UNKNOWN, so
a command made of it is judged "unknown", never as harmless.
"""

from __future__ import annotations

import re

from tether.guardian import arrays
from tether.guardian.decode import printf_format
from tether.guardian.params import NAMEREF, ifs_split
from tether.guardian.paths import normalise
from tether.guardian.shell import State
from tether.guardian.words import UNKNOWN

_ARITH_SET = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[[^\]]*\]\s*)?(?:[-+*/%&|^]|<<|>>)?=(?!=)|"
                        r"([A-Za-z_][A-Za-z0-9_]*)(?=\s*(?:\+\+|--))|(?:\+\+|--)\s*([A-Za-z_][A-Za-z0-9_]*)")
DECLARE = frozenset({"export", "declare", "typeset", "local", "readonly"})
_READ_OPTS = {"read": "dinNptu", "mapfile": "dnOsuCc", "readarray": "dnOsuCc"}


def track(argv: list[str], st: State, stdin: str | None = None, ifs: str | None = None,
          cdpath: str | None = None) -> None:
    """Carry the effects of `argv` on variables, positional parameters and cwd.

    `ifs` is the command's own IFS when a prefix assignment sets it (`IFS=, read a b`); `cdpath`
    its own CDPATH (`CDPATH=/home/u cd .ssh`).
    """
    args = argv[1:]
    if argv[0] == "builtin" and args:
        argv, args = args, args[1:]
    prog = argv[0]
    if prog in ("cd", "pushd"):
        dest = next((a for a in args if not a.startswith("-")), st.home)
        st.cwd = UNKNOWN if UNKNOWN in dest else normalise(_cd_search(dest, cdpath, st), st.cwd, st.home)
    elif prog in DECLARE:
        _declare(args, st)
    elif prog in _READ_OPTS:
        _read(prog, args, st, stdin, ifs if ifs is not None else st.env.get("IFS", " \t\n"))
    elif prog == "printf" and args[:1] == ["-v"] and len(args) > 1:
        rest = args[2:]
        known = rest and not any(UNKNOWN in a for a in rest)
        arrays.assign(st.env, args[1], printf_format(rest[0], rest[1:]) if known else UNKNOWN, st.env)
    elif prog == "set":
        _set(args, st)
    elif prog == "shift":
        items = arrays.elements(st.env, "@") if "@[@]" in st.env else None
        n = int(args[0]) if args[:1] and args[0].isdigit() else (1 if not args else -1)
        if items is not None and n >= 0:
            arrays._store(st.env, "@", items[n:])
        else:
            arrays._store(st.env, "@", [UNKNOWN])
    elif prog == "((":
        for m in _ARITH_SET.finditer(" ".join(args)):
            arrays.forget(st.env, next(g for g in m.groups() if g))
    elif prog == "getopts" and len(args) > 1:
        arrays.forget(st.env, args[1])
    elif prog == "unset" and "-f" not in args:
        for a in args:
            if not a.startswith("-"):
                arrays.unset(st.env, a)


def _cd_search(dest: str, cdpath: str | None, st: State) -> str:
    """Where `cd NAME` goes with CDPATH set: the first CDPATH folder is tried first (`CDPATH=/home/u cd
    .ssh` is ~/.ssh when it exists); an empty or `.` first entry is the working folder, and whether the
    later ones are reached depends on what exists: unknown."""
    path = cdpath if cdpath is not None else st.env.get("CDPATH", "")
    if not path or dest.startswith(("/", "./", "../", "~")) or dest in (".", ".."):
        return dest
    if UNKNOWN in path:
        return UNKNOWN
    first, *rest = path.split(":")
    if first in ("", "."):
        return dest if not any(e not in ("", ".") for e in rest) else UNKNOWN
    return first.rstrip("/") + "/" + dest


def _declare(args: list[str], st: State) -> None:
    nameref = any(a.startswith("-") and "n" in a[1:] for a in args if not a.startswith("--"))
    for a in args:
        if a.startswith(("-", "+")):
            continue
        k, eq, v = a.partition("=")
        if nameref:
            st.env[NAMEREF + k] = v if eq and re.fullmatch(r"[A-Za-z_]\w*(?:\[[^\]]*\])?", v) else UNKNOWN
        elif eq:
            arrays.assign(st.env, k, v, st.env)


def _set(args: list[str], st: State) -> None:
    """`set -- a b`, `set a b` (after options): the positional parameters."""
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            arrays._store(st.env, "@", args[i + 1 :])
            return
        if a in ("-o", "+o"):
            i += 2
            continue
        if not a.startswith(("-", "+")) or a in ("-", "+"):
            arrays._store(st.env, "@", args[i + (a in ("-", "+")) :])
            return
        i += 1


def _read(prog: str, args: list[str], st: State, stdin: str | None, ifs: str) -> None:
    """`read [-a A] NAME...`, `mapfile/readarray [NAME]` from a literal stdin, else unknown."""
    names: list[str] = []
    array, delim, i = "", "\n", 0
    while i < len(args):
        a = args[i]
        if a.startswith("-") and len(a) > 1 and not names:
            for k, f in enumerate(a[1:], 2):
                if (f == "a" and prog == "read") or f in _READ_OPTS[prog]:
                    value = a[k:] or (args[i + 1] if i + 1 < len(args) else "")
                    i += not a[k:]
                    array = value if f == "a" else array
                    delim = (value[:1] or "\0") if f == "d" else delim
                    break
        else:
            names.append(a)
        i += 1
    known = stdin is not None and UNKNOWN not in stdin
    if prog != "read":
        name = (names or ["MAPFILE"])[0]
        lines = (stdin or "").split(delim) if known else None
        arrays._store(st.env, name, [x for x in lines if x] if lines is not None else [UNKNOWN])
        return
    line = (stdin or "").split(delim)[0] if known else None
    if array:
        if line is None:
            arrays.forget(st.env, array, array=True)
        else:
            cut = ifs_split(line, ifs)
            arrays._store(st.env, array, cut[0] if cut else [line])
        return
    names = names or ["REPLY"]
    if line is None:
        for name in names:
            arrays.forget(st.env, name)
        return
    values = _split_read(line, len(names), ifs)
    for name, value in zip(names, values, strict=False):
        arrays.assign(st.env, name, value, st.env)


def _split_read(line: str, n: int, ifs: str) -> list[str]:
    """`read A B C`: one field per name, the last name takes the rest of the line."""
    if n == 1:
        return [line.strip(" \t\n") if UNKNOWN not in ifs else UNKNOWN]
    cut = ifs_split(line, ifs)
    parts = cut[0] if cut else [line]
    if len(parts) <= n:
        return parts + [""] * (n - len(parts))
    head = parts[: n - 1]
    rest = line.strip(" \t\n")
    for p in head:
        rest = rest[rest.find(p) + len(p) :].lstrip(ifs)
    return [*head, rest]
