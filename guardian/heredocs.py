"""Heredoc bodies cut out of a line, for lines bashlex cannot parse with them in.

Parts:
    Body: one heredoc's text, whether its delimiter was quoted, and the
        command substitutions an unquoted body runs.
    MARK: the name that stands for a cut heredoc (`<__tether_heredoc_N`).
    cut: text -> (text without heredoc bodies, bodies), or None when the
        reader is not sure where every heredoc starts and ends.

bashlex rejects valid lines with heredocs in them: a body holding `\\$(`, or
`[[ ]]`, `case` and arrays anywhere in the same line (the constructs rewrite
cannot see past a body). `parse.parse_line` retries such a line with every
body cut out and its operator replaced by `<__tether_heredoc_N`, which the
walker turns back into a heredoc redirect whose text is the body. A quoted
body (`<<'EOF'`) is data; an unquoted one runs its `$(..)` and backticks,
which become payloads. Fail closed: any doubt (a `<<` inside double quotes or
backticks, `((` outside a body, `case` with a `$(`, an unterminated quote or body, the
marker name in the input) returns None and the original parse error stands.
"""

from __future__ import annotations

import re

from tether.common.record import dataclass, field

MARK = "__tether_heredoc_"
_DELIM = re.compile(r"(-?)[ \t]*((?:[^\s;&|()<>'\"\\]|\\.|'[^']*'|\"[^\"]*\")+)")


@dataclass(slots=True)
class Body:
    """One heredoc cut out of the line."""

    text: str
    quoted: bool
    substitutions: list[str] = field(default_factory=list)
    """`$(..)`, backtick and `${..$(..)}` units an unquoted body expands, as written."""


def cut(text: str) -> tuple[str, list[Body]] | None:
    """The text with every heredoc body cut out, and the bodies (None: not sure)."""
    if MARK in text:
        return None
    out: list[str] = []
    bodies: list[Body] = []
    pending: list[tuple[str, bool, bool]] = []
    stack = ["N"]  # N normal, P inside $( ), D double quotes
    depth: list[int] = [0]
    i, n = 0, len(text)
    while i < n:
        c, top = text[i], stack[-1]
        if c == "\\":
            out.append(text[i : i + 2])
            i += 2
            continue
        if text.startswith(("((", "$((", "$["), i):
            return None  # arithmetic: `<<` may be a shift
        if top == "D":
            if c == '"':
                stack.pop()
            elif c == "`" or text.startswith("<<", i):
                return None
            elif text.startswith("$(", i):
                if re.search(r"\bcase\b", text):
                    return None
                stack.append("P")
                depth.append(0)
                out.append("$(")
                i += 2
                continue
            out.append(c)
            i += 1
            continue
        if c == "'":
            j = text.find("'", i + 1)
            if j < 0:
                return None
            out.append(text[i : j + 1])
            i = j + 1
            continue
        if c == "$" and text.startswith("'", i + 1):
            j = i + 2
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                return None
            out.append(text[i : j + 1])
            i = j + 1
            continue
        if c == '"':
            stack.append("D")
        elif c == "`":
            j = i + 1
            while j < n and text[j] != "`":
                j += 2 if text[j] == "\\" else 1
            if j >= n or "<<" in text[i:j]:
                return None
            out.append(text[i : j + 1])
            i = j + 1
            continue
        elif c == "#" and (i == 0 or text[i - 1] in " \t\n;&|()"):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(text[i:j])
            i = j
            continue
        elif text.startswith("$(", i):
            if re.search(r"\bcase\b", text):
                return None  # a `pat)` would close the substitution early
            stack.append("P")
            depth.append(0)
            out.append("$(")
            i += 2
            continue
        elif c == "(" and top == "P":
            depth[-1] += 1
        elif c == ")" and top == "P":
            if depth[-1]:
                depth[-1] -= 1
            else:
                stack.pop()
                depth.pop()
        elif text.startswith("<<<", i):
            out.append("<<<")
            i += 3
            continue
        elif text.startswith("<<", i):
            m = _DELIM.match(text, i + 2)
            if not m:
                return None
            word = m.group(2)
            quoted = any(q in word for q in "'\"\\")
            delim = re.sub(r"\\(.)", r"\1", re.sub(r"'([^']*)'|\"([^\"]*)\"",
                                                    lambda q: q.group(1) or q.group(2) or "", word))
            out.append(f"<{MARK}{len(bodies) + len(pending)}")
            pending.append((delim, bool(m.group(1)), quoted))
            i = m.end()
            continue
        elif c == "\n" and pending:
            out.append("\n")
            i += 1
            for delim, strip, quoted in pending:
                lines: list[str] = []
                while True:
                    if i >= n:
                        return None  # unterminated body
                    j = text.find("\n", i)
                    j = n if j < 0 else j
                    line = text[i:j]
                    i = j + 1
                    if (line.lstrip("\t") if strip else line) == delim:
                        break
                    lines.append(line.lstrip("\t") if strip else line)
                body = "\n".join(lines)
                subs = [] if quoted else substitutions(body)
                if subs is None:
                    return None
                bodies.append(Body(body, quoted, subs))
            pending = []
            continue
        out.append(c)
        i += 1
    if pending or stack != ["N"]:
        return None
    return "".join(out), bodies


def substitutions(body: str) -> list[str] | None:
    """The `$(..)`, backtick and `${..}` units an unquoted heredoc body expands (None: unsure)."""
    from tether.guardian.constructs import _Scanner
    from tether.guardian.lexer import Unsupported

    if "$" not in body and "`" not in body:
        return []
    scanner, units, i = _Scanner(body), [], 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            i += 2
            continue
        if c == "`" or (c == "$" and body[i + 1 : i + 2] in ("(", "{")):
            got: list[str] = []
            try:
                i = scanner._unit(i, got)
            except (Unsupported, RecursionError):
                return None
            unit = "".join(got)
            if "$(" in unit or "`" in unit:
                units.append(unit)
            continue
        i += 1
    return units
