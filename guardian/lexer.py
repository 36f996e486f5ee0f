"""Quote-aware reading of bash words, shared by the constructs rewrite.

Parts:
    Unsupported / unsupported: text the reader does not understand; the
        caller keeps the original text, which bashlex refuses (fails closed).
    Lexer: blanks, operators, keywords and one word at a time (quotes,
        `$'..'`, `${..}`, backticks, `$(..)`, `<(..)`, extglob groups and `=~`
        regex words). The bodies of `$(..)` and backticks go back through the
        subclass's `commands`, so constructs nested in them are rewritten too.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from typing import NoReturn


OPS = (";;&", "&>>", "<<<", "<<-", ";;", ";&", "&&", "||", "|&", "&>", ">>", ">&", ">|", "<<", "<>",
       "<&", ";", "&", "|", "(", ")", "<", ">", "\n")
META = frozenset(" \t\n;&|()<>")
TRIGGER = re.compile(r"\[\[|=\(|\(\(|\b(?:case|select|coproc)\b")
_KEYWORD = re.compile(r"(\[\[|case|select|coproc|esac|in)(?=[ \t\n;&|()<>]|$)")


class Unsupported(ValueError):
    """Text the rewriter does not understand: leave it to bashlex (which fails closed)."""


def unsupported(why: str) -> NoReturn:
    raise Unsupported(why)


class Lexer:
    """Reads words and operators of one bash text; `commands` comes from the subclass."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.n = len(text)

    def commands(self, i: int, stop: str) -> tuple[int, str, str]:
        raise NotImplementedError

    def _blanks(self, i: int, newlines: bool = False) -> int:
        s = self.s
        while i < self.n:
            if s[i] in " \t" or (newlines and s[i] == "\n"):
                i += 1
            elif s.startswith("\\\n", i):
                i += 2
            else:
                break
        return i

    def _op(self, i: int) -> str:
        s = self.s
        if s[i] in "<>" and s.startswith("(", i + 1):
            return ""  # process substitution: part of a word
        return next((op for op in OPS if s.startswith(op, i)), "")

    def _keyword(self, i: int) -> str:
        m = _KEYWORD.match(self.s, i)
        return m.group(1) if m else ""

    def _unit(self, i: int, out: list[str]) -> int:
        """Copy one quoted or substituted unit at `i` into `out`; its end, or -1 if none."""
        s, c, nxt = self.s, self.s[i], self.s[i + 1 : i + 2]
        if c == "\\":
            out.append(s[i : i + 2])
            return i + 2
        if c == "'":
            j = s.find("'", i + 1)
            if j < 0:
                unsupported("unterminated '")
            out.append(s[i : j + 1])
            return j + 1
        if c == '"':
            i, text = self.dquote(i + 1)
            out.append('"' + text)
            return i
        if c == "`":
            i, text = self.backtick(i)
            out.append(text)
            return i
        if c == "$" and nxt == "'":
            j = i + 2
            while j < self.n and s[j] != "'":
                j += 2 if s[j] == "\\" else 1
            if j >= self.n:
                unsupported("unterminated $'")
            out.append(s[i : j + 1])
            return j + 1
        if c in "$<>" and nxt == "(":
            i, text = self.subst(i + 2)
            out.append(c + "(" + text + ")")
            return i
        if c == "$" and nxt == "{":
            i, text = self.brace(i + 2)
            out.append("${" + text + "}")
            return i
        return -1

    def word(self, i: int, mode: str) -> tuple[int, str]:
        """One word from `i`: (end, rewritten text).

        mode "normal": a shell word; "pattern": extglob groups `@(a|b)` are
        part of it; "regex" (after `=~`): parens and `|` are part of it. Inside
        a group, and for `|` in a regex, metacharacters are backslash-escaped.
        """
        s, n, out = self.s, self.n, []
        depth, prev = 0, ""
        while i < n:
            c = s[i]
            j = self._unit(i, out)
            if j >= 0:
                i, prev = j, ""
                continue
            if c in META:
                opens = c == "(" and (mode == "regex" or (mode == "pattern" and prev != ""
                                                           and prev in "@!*+?"))
                if depth and c == "\n":
                    unsupported("newline in a pattern group")
                if not (opens or depth or (mode == "regex" and c == "|")):
                    break
                depth += (c == "(") - (c == ")")
                out.append("\\" + c)
            else:
                out.append(c)
            i, prev = i + 1, c
        if depth:
            unsupported("unbalanced group")
        return i, "".join(out)

    def dquote(self, i: int) -> tuple[int, str]:
        """From just after an opening `"`: (end past the closing `"`, text with it)."""
        s, out = self.s, []
        while i < self.n:
            c = s[i]
            if c == '"':
                out.append(c)
                return i + 1, "".join(out)
            special = c in "\\`" or (c == "$" and s[i + 1 : i + 2] in ("(", "{"))
            j = self._unit(i, out) if special else -1
            if j < 0:
                out.append(c)
                j = i + 1
            i = j
        unsupported('unterminated "')

    def brace(self, i: int) -> tuple[int, str]:
        """From just after `${`: (end past the matching `}`, the body)."""
        s, out, depth = self.s, [], 0
        while i < self.n:
            c = s[i]
            if c == "}" and not depth:
                return i + 1, "".join(out)
            j = self._unit(i, out)
            if j < 0:
                depth += (c == "{") - (c == "}")
                out.append(c)
                j = i + 1
            i = j
        unsupported("unterminated ${")

    def subst(self, i: int) -> tuple[int, str]:
        """From just after `$(` / `<(` / `>(`: (end past the `)`, rewritten body)."""
        if self.s.startswith("(", i):  # $(( arithmetic )): copied as written
            depth, j = 2, i + 1
            while j < self.n and depth:
                depth += (self.s[j] == "(") - (self.s[j] == ")")
                j += 1
            if depth:
                unsupported("unterminated $((")
            return j, self.s[i : j - 1]
        end, body, _ = self.commands(i, ")")
        return end, body

    def backtick(self, i: int) -> tuple[int, str]:
        s, j = self.s, i + 1
        while j < self.n and s[j] != "`":
            j += 2 if s[j] == "\\" else 1
        if j >= self.n:
            unsupported("unterminated `")
        body = s[i + 1 : j]
        if "\\" not in body and TRIGGER.search(body):
            body = type(self)(body).commands(0, "eof")[1]
        return j + 1, "`" + body + "`"

