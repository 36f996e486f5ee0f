"""Bash arrays in the walker's variable map.

An indexed array NAME is kept as env["NAME[@]"] (its elements as a JSON list)
next to env["NAME"] = element 0, which is what `$NAME` gives. The constructs
rewrite turns `a=(x "$y")` into the single word `a=<OPEN>x<SEP>"$y"`, which
the walker expands element by element.

Parts:
    Fields / subscript: `${a[@]}` (one field per element, quoted or not),
        `${a[*]}`, `${a[N]}`; any other subscript or operator is UNKNOWN.
    assign: `a=v`, `a+=v`, `a[N]=v`, `a[N]+=v` (a scalar write to an array
        sets element 0 and keeps the others, as bash does).
    assign_array: `a=(..)`, `a+=(..)`.
    forget / unset: `read -a`, `mapfile`, `unset a`, `unset 'a[1]'`.

What is not known exactly becomes UNKNOWN, never a guess: an element from an
unknown `$(cmd)`, an array with `[k]=v` elements, a write to a computed or
sparse index, appending to an unset array. `${a[N]}` is UNKNOWN as soon as
an element could expand to several words (a glob or an unknown value).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, MutableMapping

from tether.guardian.shell import UNKNOWN

NAMEREF = "&"
"""Variable-map prefix of a nameref: `declare -n r=x` stores env["&r"] = "x"."""
ARRAY_OPEN, ARRAY_SEP = "\x1e", "\x1f"
"""Markers of a rewritten compound assignment: `a=(x y)` -> `a=<OPEN>x<SEP>y`."""
KEYED = re.compile(r"\[[^\]]*\]\+?=")
"""An element `[k]=v` (sparse or associative): the layout is not tracked."""
_LHS = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[([^\]]*)\])?(\+?)$")
_INDEX = re.compile(r"-?[0-9]+")


class Fields(str):
    """The value of `${a[@]}`: one field per element, even inside double quotes."""

    items: list[str]


def elements(env: Mapping[str, str], name: str) -> list[str] | None:
    """The elements of array `name` (a scalar is a one-element array); None if unset."""
    raw = env.get(name + "[@]")
    if raw is not None:
        import json  # arrays are rare: `tether guard` starts without json

        return json.loads(raw)
    value = env.get(name)
    return None if value is None else [value]


def _exact(items: list[str]) -> bool:
    return not any(UNKNOWN in e or any(g in e for g in "*?[") for e in items)


def subscript(name: str, rest: str, env: Mapping[str, str]) -> str:
    """`${name` + rest where rest starts with `[`: the value, a Fields, or UNKNOWN."""
    items = elements(env, name) if rest.endswith("]") and rest.count("]") == 1 else None
    if items is None:
        return UNKNOWN
    sub = rest[1:-1]
    if sub == "@":
        out = Fields(" ".join(items))
        out.items = items
        return out
    if sub == "*":  # "${a[*]}" joins with the first character of IFS
        ifs = env.get("IFS", " ")
        return UNKNOWN if UNKNOWN in ifs else ifs[:1].join(items)
    if _INDEX.fullmatch(sub) and _exact(items):
        k = int(sub)
        return items[k] if -len(items) <= k < len(items) else ""
    return UNKNOWN


def _store(env: MutableMapping[str, str], name: str, items: list[str]) -> None:
    import json

    env[name + "[@]"] = json.dumps(items)
    env[name] = items[0] if items else ""


def unknown(key: str) -> str:
    """The UNKNOWN value for a variable-map key (arrays need a JSON list)."""
    if key.endswith("[@]"):
        import json

        return json.dumps([UNKNOWN])
    return UNKNOWN


def assign(target: MutableMapping[str, str], lhs: str, value: str, base: Mapping[str, str]) -> None:
    """`lhs=value` (lhs `a`, `a+`, `a[i]`, `a[i]+`) into `target`; current values read from `base`."""
    m = _LHS.match(lhs)
    if not m:
        target[lhs] = value
        return
    name, index, append = m.groups()
    ref = base.get(NAMEREF + name)
    if ref is not None:  # a nameref: the write goes to the variable it names
        if UNKNOWN in ref or ref == name:
            return
        assign(target, ref + (f"[{index}]" if index is not None else "") + append, value, base)
        return
    if index is None:
        if append:
            value = base.get(name, UNKNOWN) + value
        if name + "[@]" in base:
            items = elements(base, name) or [""]
            _store(target, name, [value, *items[1:]])
        else:
            target[name] = value
        return
    items = list(elements(base, name) or [])
    k = int(index) if _INDEX.fullmatch(index) else -1
    if k < 0 or k > len(items) or not _exact(items):
        _store(target, name, [UNKNOWN])
        return
    old = items[k] if k < len(items) else ""
    items[k : k + 1] = [old + value if append else value]
    _store(target, name, items)


def assign_array(target: MutableMapping[str, str], lhs: str, items: list[str],
                 base: Mapping[str, str]) -> None:
    """`lhs=(items)` or `lhs+=(items)` into `target`."""
    m = _LHS.match(lhs)
    if not m or m.group(2) is not None:
        target[lhs] = UNKNOWN
        return
    name, _, append = m.groups()
    if append:
        old = elements(base, name)
        items = [*(old if old is not None else [UNKNOWN]), *items]
    _store(target, name, items)


def forget(env: MutableMapping[str, str], name: str, array: bool = False) -> None:
    """`name` now holds data read at run time (`read`, `mapfile`, `printf -v`)."""
    if array:
        _store(env, name, [UNKNOWN])
    else:
        assign(env, name, UNKNOWN, env)


def unset(env: MutableMapping[str, str], name: str) -> None:
    """`unset name` (back to unknown) or `unset 'name[i]'` (the layout is lost)."""
    m = _LHS.match(name)
    if not m:
        return
    if m.group(2) is not None:
        if elements(env, m.group(1)) is not None:
            _store(env, m.group(1), [UNKNOWN])
        return
    env.pop(name, None)
    env.pop(name + "[@]", None)
