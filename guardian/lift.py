"""Lift the command substitutions bashlex cannot parse out of a line, keeping them checked.

Parts:
    MARK: the prefix of placeholder names; text that already holds it is
        refused by `prepare` (fails closed), so a placeholder is never forged.
    rewrite: text -> (text for bashlex, {placeholder: [bodies]}).

bashlex rejects `&&`, `||` and `&` inside `$(..)` / `<(..)` / `>(..)`
(`DIR="$( cd "$(dirname "$0")" && pwd )"`) and any `$(..)` inside
`$(( ))`. Such a substitution becomes `$(__tether_subst_N)`: one harmless,
parseable word whose output is unknown (the guardian's subst evaluator refuses
the placeholder, so it expands to UNKNOWN; a program name taken from it stays
"unknown program"). Its body, exactly as written, is handed back in the map;
the walker turns each placeholder it meets into payloads of the command it
belongs to, and the analyser checks each payload as its own command line
(recursively, under `max_depth`), with that command's variables and cwd.
`parse_line` refuses the line if any placeholder was never met.

An arithmetic expansion with `$(..)` or a plain backtick body inside becomes
one placeholder holding every body; one with quotes, `${..}` holding a
substitution, `<(..)` or an escaped backtick is left alone (bashlex refuses
it: GUARD-FAIL). The rest of the text goes through the constructs rewrite.
"""

from __future__ import annotations

import re

from tether.guardian.constructs import _HEREDOC, _Scanner
from tether.guardian.lexer import TRIGGER, Unsupported, unsupported

MARK = "__tether_subst_"
_LIST_AMP = ("&&", "||", "&")


def rewrite(text: str) -> tuple[str, dict[str, list[str]]]:
    """The text made parseable for bashlex, and the lifted substitution bodies."""
    subst = "$(" in text or "<(" in text or ">(" in text
    if _HEREDOC.search(text) and re.search(r"(?<!\$)\(\(", text):
        msg = "(( )) in a line with a heredoc: its `<<` may be a shift, not a heredoc"
        raise NotImplementedError(msg)
    if not (TRIGGER.search(text) or (subst and any(op in text for op in _LIST_AMP))
            or ("$((" in text and subst)) or _HEREDOC.search(text):
        return text, {}
    scanner = _Lifter(text)
    try:
        out = scanner.commands(0, "eof")[1]
    except (Unsupported, RecursionError):
        return text, {}
    return out, scanner.lifted


class _Lifter(_Scanner):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.lifted: dict[str, list[str]] = {}
        self.count = 0

    def _hold(self, bodies: list[str], first: int) -> str:
        """A new placeholder for `bodies`; placeholders made inside them are dropped."""
        for k in range(first, self.count):
            self.lifted.pop(f"{MARK}{k}", None)
        key = f"{MARK}{self.count}"
        self.count += 1
        self.lifted[key] = bodies
        return key

    def subst(self, i: int) -> tuple[int, str]:
        s, first = self.s, self.count
        if s.startswith("(", i):
            if s[i - 2] != "$":
                return super().subst(i)
            return self.arith(i + 1)
        saved, self.lists = self.lists, 0
        end, body, _ = self.commands(i, ")")
        lift, self.lists = self.lists > 0, saved
        if not lift:
            return end, body
        return end, self._hold([s[i : end - 1]], first)

    def arith(self, i: int) -> tuple[int, str]:
        """From just after `$((`: (end past `))`, the text between `$(` and `)`)."""
        s, depth, j, first = self.s, 2, i, self.count
        bodies: list[str] = []
        while j < self.n and depth:
            c = s[j]
            if s.startswith("$(", j) and not s.startswith("$((", j):
                end = super().subst(j + 2)[0]
                bodies.append(s[j + 2 : end - 1])
                j = end
                continue
            if c == "`":
                end = s.find("`", j + 1)
                if end < 0 or "\\" in s[j : end]:
                    unsupported("backtick in arithmetic")
                bodies.append(s[j + 1 : end])
                j = end + 1
                continue
            if c in "'\"\\" or (c in "<>" and s.startswith("(", j + 1)):
                unsupported(f"{c!r} in arithmetic")
            if s.startswith("${", j):
                end, body = self.brace(j + 2)
                if "$(" in body or "`" in body or "<(" in body or ">(" in body:
                    unsupported("substitution in ${..} in arithmetic")
                j = end
                continue
            depth += (c == "(") - (c == ")")
            j += 1
        if depth:
            unsupported("unterminated $((")
        if not bodies:
            return j, s[i - 1 : j - 1]
        return j, self._hold(bodies, first)
