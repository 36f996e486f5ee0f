"""Bash parameter expansion on values known statically: `${..}` operators, `$@`, `${!x}`, namerefs.

Parts:
    braced: the body of `${...}` -> its value (or UNKNOWN): `${x}`, `${x[i]}`,
        `${x:-d}`/`${x-d}`/`${x:=d}`/`${x:+a}`/`${x:?m}`, `${#x}`,
        `${x#p}`/`${x##p}`/`${x%p}`/`${x%%p}`, `${x/p/r}`/`${x//p/r}`/
        `${x/#p/r}`/`${x/%p/r}`, `${x:off}`/`${x:off:len}`, `${x^^}`/`${x,,}`/
        `${x^}`/`${x,}`/`${x~~}`, `${!x}` (indirection), `${!prefix*}`/
        `${!prefix@}` (names), `${!a[@]}` (indices), `${@}`/`${1}`.
    special: `$@`, `$*`, `$#`, `$1`..`$9` from `set -- ...` (UNKNOWN unless set
        in the line, and always UNKNOWN inside a function body).
    NAMEREF: the variable-map prefix of a nameref (`declare -n r=x` stores
        env["&r"] = "x"); `target` follows it.

Anything not literal stays UNKNOWN: an unset variable, an arithmetic offset,
a pattern with an unknown part, a transformation such as `${x@P}`.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Mapping

from tether.guardian.arrays import NAMEREF, Fields, elements, subscript
from tether.guardian.shell import UNKNOWN

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INT = re.compile(r"\s*-?\d+\s*")
Expand = Callable[[str], str]
"""Expands the text of a default, pattern or replacement (quotes, `$x`)."""


def target(name: str, env: Mapping[str, str]) -> str:
    """The variable a (possibly nameref) name stands for."""
    for _ in range(8):
        ref = env.get(NAMEREF + name)
        if ref is None:
            return name
        name = ref
    return UNKNOWN


def _fields(items: list[str]) -> Fields:
    out = Fields(" ".join(items))
    out.items = items
    return out


def positional(env: Mapping[str, str]) -> list[str] | None:
    """`$1 $2 ...` as set by `set --` in this line, or None when unknown."""
    if "@[@]" not in env:
        return None
    return elements(env, "@")


def special(ch: str, env: Mapping[str, str]) -> str:
    """`$@`, `$*`, `$#`, `$N` (one character after the `$`)."""
    args = positional(env)
    if args is None or any(UNKNOWN in a for a in args):
        return UNKNOWN
    if ch == "@":
        return _fields(args)
    if ch == "*":
        ifs = env.get("IFS", " ")
        return UNKNOWN if UNKNOWN in ifs else ifs[:1].join(args)
    if ch == "#":
        return str(len(args))
    if ch.isdigit():
        k = int(ch)
        return args[k - 1] if 0 < k <= len(args) else ("" if k else UNKNOWN)
    return UNKNOWN


def braced(inner: str, env: Mapping[str, str], expand: Expand) -> str:
    """The value of `${inner}`."""
    if inner[:1] == "!":
        return _bang(inner[1:], env)
    if inner[:1] == "#" and len(inner) > 1:
        value = braced(inner[1:], env, expand) if _NAME.fullmatch(inner[1:]) or \
            inner[1:].isdigit() else UNKNOWN
        return UNKNOWN if UNKNOWN in value else str(len(value))
    m = _NAME.match(inner)
    if not m:
        if inner[:1] and (inner[0].isdigit() or inner[0] in "@*#"):
            k = re.match(r"\d+|[@*#]", inner)
            assert k is not None
            value = special(k.group(0), env)
            if not inner[k.end() :]:
                return value
            if isinstance(value, Fields):
                return _each(value, inner[k.end() :], expand)
            return _operate(value, inner[k.end() :], expand)
        return UNKNOWN
    name, rest = target(m.group(0), env), inner[m.end():]
    if name == UNKNOWN:
        return UNKNOWN
    if rest[:1] == "[":
        close = rest.find("]")
        sub = subscript(name, rest[: close + 1], env) if close > 0 else UNKNOWN
        if close == len(rest) - 1 or close < 0:
            return sub
        if isinstance(sub, Fields):
            return _each(sub, rest[close + 1 :], expand)
        return _operate(sub, rest[close + 1 :], expand)
    value = env.get(name)
    if value is None and rest[:1] in "-=+:" and _secret_var(name):
        return UNKNOWN  # `${AWS_SECRET_ACCESS_KEY:-x}`, `${K:+$K}`: from the environment, never assumed unset
    return _operate(value, rest, expand)


def _secret_var(name: str) -> bool:
    global _SECRET
    if _SECRET is None:
        from tether.guardian.secrets_table import SECRET_VAR

        _SECRET = re.compile(SECRET_VAR)
    return _SECRET.search(name) is not None


_SECRET: re.Pattern[str] | None = None


def _each(value: Fields, rest: str, expand: Expand) -> str:
    """An operator on `${a[@]}`: a slice of the elements, or the operator on each one."""
    items = value.items
    m = re.fullmatch(r":(\s*-?\d+)(?::(\s*-?\d+))?", rest)
    if m:
        off = int(m.group(1))
        start = max(0, len(items) + off) if off < 0 else off
        end = len(items) if m.group(2) is None else start + int(m.group(2))
        return _fields(items[start:end]) if end >= start else UNKNOWN
    if rest[:1] in "#%/^,~" and rest:
        out = [_operate(x, rest, expand) for x in items]
        return UNKNOWN if any(UNKNOWN in x for x in out) else _fields(out)
    return UNKNOWN


def _bang(rest: str, env: Mapping[str, str]) -> str:
    """`${!x}`, `${!prefix*}`, `${!prefix@}`, `${!a[@]}`."""
    m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)([*@])", rest)
    if m:
        names = sorted(k for k in env if _NAME.fullmatch(k) and k.startswith(m.group(1)))
        return _fields(names) if m.group(2) == "@" else " ".join(names)
    m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]", rest)
    if m:
        items = elements(env, m.group(1))
        return UNKNOWN if items is None else _fields([str(k) for k in range(len(items))])
    if env.get(NAMEREF + rest) is not None:
        return env[NAMEREF + rest]  # `${!ref}` of a nameref is the name it refers to
    if not (_NAME.fullmatch(rest) or rest.isdigit()):
        return UNKNOWN
    pointer = env.get(rest) if _NAME.fullmatch(rest) else special(rest, env)
    if pointer is None or UNKNOWN in pointer:
        return UNKNOWN
    if _NAME.fullmatch(pointer) or re.fullmatch(r"[A-Za-z_]\w*\[[^\]]*\]", pointer):
        return braced(pointer, env, lambda t: t)
    return special(pointer, env) if pointer.isdigit() or pointer in ("@", "*", "#") else UNKNOWN


def _operate(value: str | None, rest: str, expand: Expand) -> str:
    """Apply the operator text after the name to `value` (None: unset)."""
    if not rest:
        return UNKNOWN if value is None else value
    op2, op1 = rest[:2], rest[:1]
    if op2 in (":-", ":=") or op1 in ("-", "="):
        word = rest[2:] if op1 == ":" else rest[1:]
        use = value is None or (value == "" and op1 == ":")
        return (expand(word) if word else "") if use else value  # type: ignore[return-value]
    if op2 == ":+" or op1 == "+":
        word = rest[2:] if op1 == ":" else rest[1:]
        empty = value is None or (value == "" and op1 == ":")
        if value is not None and UNKNOWN in value and op1 == ":":
            return UNKNOWN
        return "" if empty else (expand(word) if word else "")
    if op2 == ":?" or op1 == "?":
        return UNKNOWN if value is None else value
    if value is None or UNKNOWN in value:
        return UNKNOWN
    if op1 in "#%":
        return _trim(value, rest, expand)
    if op1 == "/":
        return _replace(value, rest[1:], expand)
    if op1 in "^,~":
        if len(rest) > 2 or (len(rest) == 2 and rest[1] != rest[0]):
            return UNKNOWN
        first = len(rest) == 1
        fn = {"^": str.upper, ",": str.lower, "~": str.swapcase}[op1]
        return (fn(value[:1]) + value[1:]) if first else fn(value)
    if op1 == ":":
        return _slice(value, rest[1:])
    return UNKNOWN


def _pattern(text: str, expand: Expand) -> re.Pattern[str] | None:
    pat = expand(text)
    if UNKNOWN in pat:
        return None
    return re.compile(fnmatch.translate(pat))


def _trim(value: str, rest: str, expand: Expand) -> str:
    longest = rest[:2] in ("##", "%%")
    rx = _pattern(rest[2:] if longest else rest[1:], expand)
    if rx is None:
        return UNKNOWN
    n = len(value)
    order = range(n, -1, -1) if longest else range(n + 1)
    for k in order:
        if rest[0] == "#" and rx.match(value[:k]):
            return value[k:]
        if rest[0] == "%" and rx.match(value[n - k :]):
            return value[: n - k]
    return value


def _replace(value: str, rest: str, expand: Expand) -> str:
    """`/p/r` (first), `//p/r` (all), `/#p/r` (prefix), `/%p/r` (suffix); longest match."""
    mode = rest[0] if rest[:1] in ("/", "#", "%") else ""
    body = rest[1:] if mode else rest
    cut = re.search(r"(?<!\\)/", body)
    pat_text, rep_text = (body[: cut.start()], body[cut.end() :]) if cut else (body, "")
    rx = _pattern(pat_text, expand)
    rep = expand(rep_text) if rep_text else ""
    if rx is None or UNKNOWN in rep or len(value) > 256:
        return UNKNOWN
    n = len(value)
    if mode == "#":
        e = next((e for e in range(n, -1, -1) if rx.match(value[:e])), None)
        return value if e is None else rep + value[e:]
    if mode == "%":
        s = next((s for s in range(n + 1) if rx.match(value[s:])), None)
        return value if s is None else value[:s] + rep
    out, i = [], 0
    while i <= n:
        hit = next(((s, e) for s in range(i, n + 1) for e in range(n, s, -1) if rx.match(value[s:e])),
                   None)
        if hit is None:
            break
        out.append(value[i : hit[0]] + rep)
        i = hit[1]
        if mode != "/":
            break
    return "".join(out) + value[i:]


def _slice(value: str, spec: str) -> str:
    off_text, _, len_text = spec.partition(":")
    if not _INT.fullmatch(off_text) or (len_text and not _INT.fullmatch(len_text)):
        return UNKNOWN
    off = int(off_text)
    start = max(0, len(value) + off) if off < 0 else off
    if not len_text:
        return value[start:]
    length = int(len_text)
    end = start + length if length >= 0 else len(value) + length
    return value[start:end] if end >= start else UNKNOWN


def ifs_split(value: str, ifs: str) -> tuple[list[str], bool, bool] | None:
    """Field splitting of an unquoted expansion by IFS: (parts, leading, trailing
    delimiter), or None when nothing splits. Whitespace in IFS collapses and is
    trimmed; every other IFS character ends a field (`IFS=,; c=rm,-rf,/; $c`)."""
    if not ifs or not any(c in ifs for c in value):
        return None
    ws = "".join(c for c in ifs if c in " \t\n")
    other = "".join(c for c in ifs if c not in " \t\n")
    body = value.strip(ws) if ws else value
    lead = bool(ws) and value[:1] in ws
    trail = bool(ws) and value[-1:] in ws
    wsx = f"[{re.escape(ws)}]*" if ws else ""
    alts = [f"{wsx}[{re.escape(other)}]{wsx}"] if other else []
    alts += [f"[{re.escape(ws)}]+"] if ws else []
    delim = "|".join(alts)
    parts = re.split(delim, body) if body else []
    if len(parts) > 1 and parts[-1] == "" and other and body[-1:] in other:
        parts.pop()
        trail = True
    return parts, lead, trail
