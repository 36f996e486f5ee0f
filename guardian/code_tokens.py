"""A small tokenizer and call reader for perl, ruby, node, php, lua and R code.

Parts:
    Call: a callee name (dotted, last part lower-cased for lookups) and its
        arguments, each a literal string, a list of literal strings, or NONLIT.
    calls: code + language -> every call it can see, with or without parens
        (`system("x")`, `system "x"`, `os.execute"x"`, `%x(..)`/backticks as
        a call named "`").

This is not a parser. It reads string literals (quotes, perl q//qq//qw//qx//,
ruby %w[]/%x(), lua [[..]], JS templates), names joined by `.`, `::` and
`->`, and brackets; an argument made only of string literals joined by `+`,
`.`, `..` or `,` inside `[..]`/`(..)`/`qw` is literal, anything else is
NONLIT (which makes an exec call `ask`). Interpolating strings with a
variable in them are NONLIT too.
"""

from __future__ import annotations

import re

from tether.common.record import dataclass
from tether.guardian.code_actions import NONLIT

_NAME = re.compile(r"[$@%&]?[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::|->|:)[A-Za-z_][A-Za-z0-9_]*)*")
_QUOTE_OPS = {"perl": ("q", "qq", "qw", "qx"), "ruby": ("%w", "%W", "%x", "%q", "%Q", "%i", "%")}
_PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}
_INTERP = {"perl": re.compile(r"(?<!\\)[$@][{\w]"), "php": re.compile(r"(?<!\\)\$[{\w]"),
           "ruby": re.compile(r"#\{"), "node": re.compile(r"\$\{"), "R": None, "lua": None}
_COMMENT = {"perl": ("#",), "ruby": ("#",), "R": ("#",), "php": ("#", "//"), "node": ("//",),
            "lua": ("--",)}
_TEMPLATE_TICKS = frozenset({"node", "R", "lua", "python", "tcl", "awk"})
"""Languages where a backtick string is not a command (JS template literals, R names)."""
_ENDS = frozenset({";", "\n", ")", "]", "}", "if", "unless", "or", "and", "||", "&&", "do", "then"})


@dataclass(slots=True)
class Tok:
    kind: str
    """"str", "list", "cmd" (backticks/qx), "name", "num" or "op"."""
    value: object


@dataclass(slots=True)
class Call:
    name: str
    args: list[object]

    @property
    def short(self) -> str:
        return re.split(r"\.|::|->|:", self.name)[-1].lstrip("$@%&")


def _close(s: str, i: int, open_: str) -> int:
    """Index of the delimiter closing the quote-like opened at s[i] (== open_)."""
    close, depth, j = _PAIRS.get(open_, open_), 0, i
    while j < len(s):
        c = s[j]
        if c == "\\":
            j += 2
            continue
        if c == close and (depth == 0 or open_ == close):
            if depth == 0 or open_ == close:
                return j
        if c == open_ and open_ != close:
            depth += 1
        elif c == close:
            depth -= 1
        j += 1
    return len(s)


def _unescape(body: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


def tokens(code: str, lang: str) -> list[Tok]:
    out: list[Tok] = []
    s, i, n = code, 0, len(code)
    interp = _INTERP.get(lang)
    comments = _COMMENT.get(lang, ())
    while i < n:
        c = s[i]
        if c in " \t\r":
            i += 1
            continue
        if any(s.startswith(m, i) for m in comments) or (lang in ("node", "php") and s.startswith("/*", i)):
            end = s.find("*/", i) + 2 if s.startswith("/*", i) else s.find("\n", i)
            i = n if end <= 1 else end
            continue
        if lang == "lua" and s.startswith("[[", i):
            j = s.find("]]", i + 2)
            j = n if j < 0 else j
            out.append(Tok("str", s[i + 2 : j]))
            i = j + 2
            continue
        m = re.match(r"(qw|qq|qx|q)\s*([^\w\s])", s[i:]) if lang == "perl" else (
            re.match(r"(%[wWxqQi]?)([(\[{<|!/])", s[i:]) if lang == "ruby" else None)
        if m and (not out or out[-1].kind == "op" or m.group(1) != "q"):
            op, delim = m.group(1), m.group(2)
            j = _close(s, i + m.end(), delim)
            body = s[i + m.end() : j]
            i = j + 1
            if op in ("qw", "%w", "%W", "%i"):
                out.append(Tok("list", body.split()))
            elif op in ("qx", "%x"):
                out.append(Tok("cmd", NONLIT if interp and interp.search(body) else body))
            else:
                dyn = op in ("qq", "%Q", "%") and interp is not None and interp.search(body)
                out.append(Tok("str", NONLIT if dyn else _unescape(body)))
            continue
        if c in "'\"`":
            j = _close(s, i + 1, c)
            body = s[i + 1 : j]
            i = j + 1
            if c != "'" and interp is not None:
                body = _HOME_IN.sub("~", body)
            dyn = c != "'" and interp is not None and bool(interp.search(body))
            if lang == "lua" or lang == "R":
                dyn = False
            value = NONLIT if dyn else (_unescape(body) if c != "'" or lang != "php" else body)
            kind = "cmd" if c == "`" and lang not in _TEMPLATE_TICKS else "str"
            out.append(Tok(kind, value))
            continue
        m = _NAME.match(s, i)
        if m:
            out.append(Tok("name", m.group(0)))
            i = m.end()
            continue
        m = re.match(r"\d+(?:\.\d+)?|0[xo][0-9a-fA-F]+", s[i:])
        if m:
            out.append(Tok("num", m.group(0)))
            i += m.end()
            continue
        two = s[i : i + 2]
        op = two if two in ("..", "||", "&&", "=>", "=~", "==", "->", "::") else c
        out.append(Tok("op", op))
        i += len(op)
    return out


_HOME = re.compile(r"(?:require\(['\"](?:node:)?os['\"]\)\.|os\.)homedir\(\)|Dir\.home|"
                   r"process\.env\.HOME|ENV\[['\"]HOME['\"]\]|\$ENV\{['\"]?HOME['\"]?\}|"
                   r"(?:Sys\.|os\.)?getenv\(['\"]HOME['\"]\)|\$_SERVER\[['\"]HOME['\"]\]|"
                   r"File\.expand_path\(['\"]~['\"]\)|path\.expand\(['\"]~['\"]\)")
"""The home directory spelled in code: judged as `~`."""
_HOME_IN = re.compile(r"\$ENV\{['\"]?HOME['\"]?\}|\$\{?HOME\}?\b|#\{(?:Dir\.home|ENV\[['\"]HOME['\"]\])\}|"
                      r"\$\{(?:process\.env\.HOME|os\.homedir\(\))\}|\{\$_SERVER\[['\"]HOME['\"]\]\}")
"""The home directory interpolated into a string (`"$ENV{HOME}/x"`, `"#{Dir.home}/x"`)."""


def _text(t: Tok) -> str:
    return '"' + str(t.value) + '"' if t.kind == "str" else str(t.value)


def _home(toks: list[Tok]) -> list[Tok]:
    """Token runs that spell the home directory replaced by the literal `~`."""
    out, i = [], 0
    while i < len(toks):
        for j in range(min(len(toks), i + 12), i, -1):
            if _HOME.fullmatch("".join(_text(t) for t in toks[i:j])):
                out.append(Tok("str", "~"))
                i = j
                break
        else:
            out.append(toks[i])
            i += 1
    return out


def _value(toks: list[Tok]) -> object:
    """An argument's value: a literal string, a list of literals, or NONLIT."""
    toks = [t for t in toks if not (t.kind == "op" and t.value == "\n")]
    if any(t.kind == "name" and "home" in str(t.value).lower() or t.kind == "str" and t.value in ("HOME", "~")
           for t in toks):
        toks = _home(toks)
    if len(toks) == 1 and toks[0].kind in ("str", "num", "cmd"):
        return str(toks[0].value) if toks[0].value is not NONLIT else NONLIT
    if len(toks) == 2 and toks[0].value == "-" and toks[1].kind == "num":
        return "-" + str(toks[1].value)
    if len(toks) == 1 and toks[0].kind == "list":
        return toks[0].value
    if toks and toks[0].kind == "op" and toks[0].value in ("[", "(") and toks[-1].kind == "op" \
            and toks[-1].value in ("]", ")"):
        return [_value(p) for p in _split(toks[1:-1])]
    if len(toks) == 2 and toks[0].kind == "name" and toks[0].value in ("glob", "Dir.glob") and \
            toks[1].kind == "str":
        return _value(toks[1:])  # a glob pattern: judged like the shell's own globs
    if len(toks) > 2 and toks[0].kind == "name" and toks[1].value in ("=", ":", "=>"):
        return _value(toks[2:])  # a named argument: `text = "..."`, `cmd: "..."`
    decoded = _decoded(toks)
    if decoded is not None:
        return decoded
    if toks and toks[0].kind == "name" and toks[0].value in ("c", "array", "list") and len(toks) > 2:
        return _value(toks[1:])
    if toks and all(t.kind in ("str", "num") or (t.kind == "op" and t.value in "+...")
                    for t in toks) and toks[0].kind == "str":
        parts = [t.value for t in toks if t.kind != "op"]
        return "".join(str(p) for p in parts) if NONLIT not in parts else NONLIT
    return NONLIT


_B64 = frozenset({"decode_base64", "base64_decode", "atob", "Base64.decode64", "Base64.strict_decode64",
                  "Base64.urlsafe_decode64", "MIME::Base64::decode_base64", "base64enc::base64decode",
                  "mime.unb64", "base64.decode", "hex2bin", "str_rot13", "gzinflate", "pack"})


def _decoded(toks: list[Tok]) -> object:
    """A decoder applied to one literal: `base64_decode("..")`, `atob("..")`,
    `Base64.decode64("..")`, `Buffer.from("..", "base64").toString()`,
    `pack("H*", "..")`, `str_rot13("..")`; None when the tokens are not one."""
    import base64
    import binascii
    import codecs

    if len(toks) < 4 or toks[0].kind != "name" or toks[1].value != "(":
        return None
    name = str(toks[0].value)
    end = _group(toks, 1)
    args = [_value(p) for p in _split(toks[2 : end - 1])]
    if not args or not all(isinstance(a, str) and a is not NONLIT for a in args):
        return NONLIT if name in _B64 or name == "Buffer.from" else None
    data = str(args[-1] if name == "pack" else args[0])
    try:
        if name == "str_rot13":
            return codecs.decode(data, "rot13")
        if name == "hex2bin" or (name == "pack" and str(args[0]).upper().startswith("H")) or (
                name == "Buffer.from" and len(args) > 1 and args[1] == "hex"):
            return bytes.fromhex(data).decode("latin-1")
        if name in _B64 or (name == "Buffer.from" and len(args) > 1 and args[1] == "base64"):
            raw = data.encode("latin-1")
            return base64.b64decode(raw + b"=" * (-len(raw) % 4)).decode("latin-1")
    except (binascii.Error, ValueError):
        return NONLIT
    return None


def _split(toks: list[Tok]) -> list[list[Tok]]:
    parts: list[list[Tok]] = [[]]
    depth = 0
    for t in toks:
        if t.kind == "op" and t.value in ("(", "[", "{"):
            depth += 1
        elif t.kind == "op" and t.value in (")", "]", "}"):
            depth -= 1
        if t.kind == "op" and t.value == "," and depth == 0:
            parts.append([])
        else:
            parts[-1].append(t)
    return [p for p in parts if p]


def _group(toks: list[Tok], i: int) -> int:
    """Index just past the bracket group opening at toks[i]."""
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j]
        if t.kind == "op" and t.value in ("(", "[", "{"):
            depth += 1
        elif t.kind == "op" and t.value in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                return j + 1
    return len(toks)


def calls(code: str, lang: str) -> list[Call]:
    """Every call in `code`: `name(args)`, `name args;` and command literals (name "`")."""
    toks = tokens(code, lang)
    out: list[Call] = []
    for i, t in enumerate(toks):
        if t.kind == "cmd":
            out.append(Call("`", [t.value]))
            continue
        if t.kind == "str" and i + 2 < len(toks) and toks[i + 1].value == "." and (
                toks[i + 2].value in ("execute", "!", "!!", "lazyLines", "lineStream")):
            out.append(Call("`", [t.value]))  # groovy "cmd".execute(), scala "cmd".!
            continue
        if t.kind != "name":
            continue
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if nxt is None:
            out.append(Call(str(t.value), []))
        elif nxt.kind == "op" and nxt.value == "(":
            end = _group(toks, i + 1)
            out.append(Call(str(t.value), [_value(p) for p in _split(toks[i + 2 : end - 1])]))
        elif nxt.kind in ("str", "list", "name", "num") and lang not in ("node", "php"):
            j = i + 1
            while j < len(toks) and not (toks[j].kind == "op" and toks[j].value in _ENDS) and not (
                    toks[j].kind == "name" and toks[j].value in _ENDS):
                j = _group(toks, j) if toks[j].kind == "op" and toks[j].value in "([{" else j + 1
            out.append(Call(str(t.value), [_value(p) for p in _split(toks[i + 1 : j])]))
    return out
