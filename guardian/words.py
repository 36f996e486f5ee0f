"""Static shell word expansion: the argv a word would become, where that is knowable.

Parts:
    UNKNOWN: the marker put where a value cannot be known statically.
    expand_word: raw word text -> list of fields (quotes, `$'..'`, variables,
        `${IFS}`, tilde, brace expansion, command substitution markers).
    ansi_c: decoding of `$'..'` bodies (also used for `printf` and `echo -e`).
    `${a[@]}` gives one field per element, also inside double quotes
        (arrays are kept in the variable map, see `guardian.arrays`).

bashlex strips quotes but mangles `$'\\x72m'` and does not expand anything, so
the guardian re-reads each word's source text here. Anything it cannot know
(an unset variable, `$(...)`, `$?`) becomes UNKNOWN, which callers must treat
as "could be anything" rather than as empty.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from tether.guardian.arrays import Fields
from tether.guardian.params import braced, ifs_split, special, target
from tether.guardian.shell import UNKNOWN

_BREAK = ("", None)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SIMPLE_ESC = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b",
               "E": "\x1b", "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_ESC = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)", re.S)

SubstEval = Callable[[str], str | None]
"""Evaluates the body of `$(...)` statically (e.g. `echo rm`), or None."""


def ansi_c(body: str) -> str:
    """Decode backslash escapes as bash does inside `$'...'`."""

    def one(m: re.Match[str]) -> str:
        s = m.group(1)
        head = s[0]
        if head in "xuU":
            return chr(min(int(s[1:], 16), 0x10FFFF))
        if head.isdigit():
            return chr(int(s, 8) & 0xFF)
        if head == "c":
            return chr(ord(s[1]) & 0x1F)
        return _SIMPLE_ESC.get(head, "\\" + head)

    return _ESC.sub(one, body)


def _add(out: list[tuple[str, bool | None]], value: str, split: bool) -> bool:
    """Append an expansion; `${a[@]}` becomes one piece per element with breaks between.

    Returns True for `${a[@]}` of an empty array, which adds nothing (not even a field).
    """
    if not isinstance(value, Fields):
        out.append((value, split))
        return False
    for k, item in enumerate(value.items):
        if k:
            out.append(_BREAK)
        out.append((item, split))
    return not value.items


def _matching(text: str, i: int, open_: str, close: str) -> int:
    """Index just past the `close` matching the `open_` at text[i] (quote-aware)."""
    depth, j, n = 0, i, len(text)
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == "'" and open_ != "{":
            k = text.find("'", j + 1)
            j = n if k < 0 else k + 1
            continue
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return n


def _param(text: str, i: int, env: Mapping[str, str]) -> tuple[str, int]:
    """Expand the parameter starting at text[i] == '$' (not `$(`); value, next index."""
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if nxt == "{":
        end = _matching(text, i + 1, "{", "}")
        return braced(text[i + 2 : end - 1], env, lambda t: expand_joined(t, env)), end
    m = _NAME.match(text, i + 1)
    if m:
        value = env.get(target(m.group(0), env))
        return (UNKNOWN if value is None else value), m.end()
    if nxt and (nxt.isdigit() or nxt in "@*#"):
        return special(nxt, env), i + 2
    if nxt and (nxt.isdigit() or nxt in "@*#?$!-"):
        return UNKNOWN, i + 2
    return "$", i + 1


def _dollar(text: str, i: int, env: Mapping[str, str], subst: SubstEval | None) -> tuple[str, int]:
    """Expand `$...` at text[i]; returns (value, next index)."""
    if text.startswith("$((", i):
        return "0", _matching(text, i + 1, "(", ")")
    if text.startswith("$(", i):
        end = _matching(text, i + 1, "(", ")")
        out = subst(text[i + 2 : end - 1]) if subst else None
        return (UNKNOWN if out is None else out), end
    if text.startswith("$'", i):
        k = i + 2
        while k < len(text) and text[k] != "'":
            k += 2 if text[k] == "\\" else 1
        return ansi_c(text[i + 2 : k]), k + 1
    if text.startswith('$"', i):
        return "", i + 1
    return _param(text, i, env)


def _pieces(text: str, env: Mapping[str, str],
            subst: SubstEval | None) -> list[tuple[str, bool | None]]:
    """Split a word into (value, splittable) pieces; splittable = unquoted expansion.

    A piece with splittable None is a field break (between `${a[@]}` elements).
    """
    out: list[tuple[str, bool | None]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            if text[i + 1 : i + 2] != "\n":
                out.append((text[i + 1 : i + 2], False))
            i += 2
        elif c == "'":
            k = text.find("'", i + 1)
            k = n if k < 0 else k
            out.append((text[i + 1 : k], False))
            i = k + 1
        elif c == '"':
            before = len(out)
            i, void = _dquote(text, i + 1, env, subst, out)
            if len(out) == before and not void:
                out.append(("", False))  # `""` is still a field; `"${a[@]}"` of () is none
        elif c == "$":
            value, i2 = _dollar(text, i, env, subst)
            _add(out, value, not text.startswith("$'", i))
            i = i2
        elif c == "`":
            k = text.find("`", i + 1)
            k = n if k < 0 else k
            res = subst(text[i + 1 : k]) if subst else None
            out.append((UNKNOWN if res is None else res, True))
            i = k + 1
        elif c in "<>" and text[i + 1 : i + 2] == "(":
            end = _matching(text, i + 1, "(", ")")
            out.append(("/dev/fd/63", False))
            i = end
        else:
            out.append((c, False))
            i += 1
    return out


def _dquote(text: str, i: int, env: Mapping[str, str], subst: SubstEval | None,
            out: list[tuple[str, bool | None]]) -> tuple[int, bool]:
    """Consume a double-quoted run starting after its `"`: the next index, and
    whether it held `${a[@]}` of an empty array."""
    n, void = len(text), False
    while i < n and text[i] != '"':
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                out.append((text[i + 1], False))
            i += 2
        elif c == "$" and not text.startswith("$'", i):
            value, i = _dollar(text, i, env, subst)
            void = _add(out, value, False) or void
        elif c == "`":
            k = text.find("`", i + 1)
            k = n if k < 0 else k
            res = subst(text[i + 1 : k]) if subst else None
            out.append((UNKNOWN if res is None else res, False))
            i = k + 1
        else:
            out.append((c, False))
            i += 1
    return i + 1, void


def brace_expand(text: str, limit: int = 64) -> list[str]:
    """Expand unquoted `{a,b,c}` groups (bash does this before anything else)."""
    if "{" not in text or "," not in text:
        return [text]
    i, n, quote = 0, len(text), ""
    while i < n:
        c = text[i]
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "\\":
            i += 1
        elif c == "$" and text[i + 1 : i + 2] == "{":
            i = _matching(text, i + 1, "{", "}") - 1
        elif c == "{":
            end = _matching(text, i, "{", "}")
            body = text[i + 1 : end - 1]
            alts = _split_commas(body)
            if end <= n and text[end - 1] == "}" and len(alts) > 1:
                head, tail = text[:i], text[end:]
                results: list[str] = []
                for alt in alts:
                    for tail_x in brace_expand(tail, limit):
                        results.append(head + alt + tail_x)
                        if len(results) >= limit:
                            return results
                return results
        i += 1
    return [text]


def _split_commas(body: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for j, c in enumerate(body):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(body[start:j])
            start = j + 1
    parts.append(body[start:])
    return parts


def expand_word(raw: str, env: Mapping[str, str], home: str,
                subst: SubstEval | None = None) -> list[str]:
    """The fields one unexpanded shell word becomes (may be several, or none)."""
    fields: list[str] = []
    ifs = env.get("IFS", " \t\n")
    for text in brace_expand(raw):
        if text.startswith("~"):
            m = re.match(r"~([A-Za-z0-9_.-]*)(?=/|$)", text)
            if m:
                user = m.group(1)
                text = (home if not user else f"/home/{user}") + text[m.end() :]
        current, has = "", False
        for value, split in _pieces(text, env, subst):
            if split is None:
                if has or current:
                    fields.append(current)
                current, has = "", False
            elif split and (cut := ifs_split(value, ifs)) is not None:
                parts, lead, trail = cut
                if lead and (current or has):
                    fields.append(current)
                    current, has = "", False
                for k, part in enumerate(parts):
                    if k:
                        fields.append(current)
                        current = ""
                    current += part
                has = bool(current)
                if trail and current:
                    fields.append(current)
                    current, has = "", False
            elif split and UNKNOWN in ifs and value:
                current += UNKNOWN
                has = True
            else:
                current += value
                has = has or not split or bool(value)  # an empty unquoted expansion is no field
        if has or current:
            fields.append(current)
    return fields


def expand_joined(raw: str, env: Mapping[str, str], home: str = "/root",
                  subst: SubstEval | None = None) -> str:
    """The word's value as one string (for assignments, which do not split)."""
    return " ".join(expand_word(raw, env, home, subst)) if raw else ""
