"""Before bashlex: rewrites it cannot parse, and a fast path it is not needed for.

Parts:
    prepare: `$((arith))` without substitutions -> `0`, `time` -> blanks,
        quoted heredoc delimiters unquoted (their names returned), then
        `[[ ]]`, case, select, coproc and arrays rewritten (`constructs`),
        substitutions bashlex cannot parse lifted out (`lift`).
    fast_split: plain commands (words, simple quotes, globs, `|`, `&&`, `||`,
        `;`) tokenised with shlex; anything else returns None for bashlex.
    track: re-exported from `guardian.builtins` (state carried along the line).
"""

from __future__ import annotations

import re
import shlex

from tether.guardian import arrays
from tether.guardian.builtins import track
from tether.guardian.lift import MARK, rewrite
from tether.guardian.shell import Simple, State

_PLAIN = re.compile(r"[A-Za-z0-9 \t._/,:@+%=^*?\[\]'\"|;&-]*")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_SEPARATORS = frozenset({"|", "||", "&&", ";"})
_RESERVED = frozenset({"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done",
                       "case", "esac", "function", "select", "time", "{", "}", "!", "[[", "]]",
                       "coproc", "in"})
_ARITH = re.compile(r"\$\(\(")
_QUOTED_HEREDOC = re.compile(r"(?<!<)<<(?!<)(-?)\s*(?:'([^'\n]+)'|\"([^\"\n]+)\"|\\(\w+))")
_TIME = re.compile(r"(^|[;&|({\n]|&&|\|\|)(\s*)time(\s+-p)?(?=\s)")


def prepare(text: str) -> tuple[str, list[str], dict[str, list[str]]]:
    """Rewrite what bashlex cannot parse but the guardian can judge.

    Quoted heredoc delimiters (`<<'EOF'`) lose their quotes (bashlex rejects
    them); their names are returned so the body is not read for `$(..)`.

    `$((expr))` without command substitution inside becomes `0` (arithmetic
    runs nothing); `time` becomes blanks (it only times its pipeline). With a
    `$(` or backtick inside, arithmetic is lifted (below) or, where that is
    not safe, left alone so bashlex refuses it and the check fails closed.

    Substitutions bashlex cannot parse are lifted out (`guardian.lift`); the
    third value maps each placeholder left in the text to the bodies it holds.

    Text holding the array markers (control characters) or a placeholder name
    is refused outright.
    """
    if arrays.ARRAY_OPEN in text or arrays.ARRAY_SEP in text or MARK in text:
        msg = "control characters or placeholder names used as markers"
        raise NotImplementedError(msg)
    extra: list[str] = []
    if "$((" in text:
        out, i = [], 0
        for m in _ARITH.finditer(text):
            if m.start() < i:
                continue
            end = _arith_end(text, m.start() + 3)
            inner = text[m.start() + 3 : end - 2] if end > 0 else ""
            if end < 0 or any(t in inner for t in ("$(", "`", "<(", ">(")):
                continue
            out.append(text[i : m.start()] + _arith_value(inner, text, m.start()))
            i = end
        text = "".join(out) + text[i:]
    if "<<" in text:
        def unquote(m: re.Match[str]) -> str:
            name = m.group(2) or m.group(3) or m.group(4)
            extra.append(name)
            return f"<<{m.group(1)}{name}"

        text = _QUOTED_HEREDOC.sub(unquote, text)
    if "time" in text:
        text = _TIME.sub(lambda m: m.group(1) + m.group(2) + " " * (4 + len(m.group(3) or "")), text)
    text, lifted = rewrite(text)
    return text, extra, lifted


def _arith_value(expr: str, text: str, at: int) -> str:
    """`$((expr))` without substitutions: its value when made of integer literals;
    otherwise `0`, or an unknown value inside `${..}` (an offset such as
    `${x:$((1))}` changes which command a word spells)."""
    value = _integer(expr)
    if value is not None:
        return str(value)
    opened = text.rfind("${", 0, at)
    inside = opened >= 0 and "}" not in text[opened:at]
    return "${__tether_subst_arith}" if inside else "0"


def _integer(expr: str) -> int | None:
    import ast

    if len(expr) > 100 or not re.fullmatch(r"[\d\s+\-*/%()]*", expr) or not expr.strip():
        return None
    try:
        node = ast.parse(expr.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None

    def ev(n: ast.AST) -> int:
        if isinstance(n, ast.Constant) and isinstance(n.value, int):
            return n.value
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            return -ev(n.operand) if isinstance(n.op, ast.USub) else ev(n.operand)
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Mod)):
            a, b = ev(n.left), ev(n.right)
            if isinstance(n.op, (ast.Div, ast.Mod)):
                if b == 0:
                    raise ZeroDivisionError
                q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
                return q if isinstance(n.op, ast.Div) else a - q * b
            return a + b if isinstance(n.op, ast.Add) else a - b if isinstance(n.op, ast.Sub) else a * b
        raise ValueError

    try:
        value = ev(node)
    except (ValueError, ZeroDivisionError, RecursionError):
        return None
    return value if abs(value) < 10**18 else None


def _arith_end(text: str, i: int) -> int:
    depth = 2
    while i < len(text):
        c = text[i]
        depth += c == "("
        depth -= c == ")"
        if depth == 0:
            return i + 1
        i += 1
    return -1


def fast_split(text: str, st: State) -> list[Simple] | None:
    """Tokenise the common plain subset without bashlex (it is the slow part).

    Only text made of words, plain quotes, globs, `|`, `||`, `&&` and `;`
    qualifies: no `$`, backslash, backtick, redirect, brace, tilde, comment or
    background `&`, and no quoted separator. Anything else returns None and
    goes to bashlex.
    """
    if not _PLAIN.fullmatch(text) or "\n" in text:
        return None
    if any(c in q for q in _QUOTED.findall(text) for c in "|;&"):
        return None
    lexer = shlex.shlex(text, posix=True, punctuation_chars="|;&")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:
        return None
    out: list[Simple] = []
    argv: list[str] = []
    previous: list[Simple] = []
    if any(t in _RESERVED or (t and set(t) <= set("|;&") and t not in _SEPARATORS) for t in tokens):
        return None
    for tok in [*tokens, ";"]:
        if tok not in _SEPARATORS:
            argv.append(tok)
            continue
        if not argv:
            if out or tok != ";":
                return None if tok != ";" else out
            continue
        if "=" in argv[0]:
            return None
        simple = Simple(argv, env=dict(st.env), cwd=st.cwd, upstream=previous)
        out.append(simple)
        track(argv, st)
        previous = [simple] if tok == "|" else []
        argv = []
    return out
