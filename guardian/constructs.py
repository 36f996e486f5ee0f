"""Rewrite the bash constructs bashlex cannot parse into forms it can, keeping every command.

Parts:
    rewrite: text -> text bashlex parses, or the text unchanged when it holds
        none of the constructs or one that cannot be rewritten safely.

    `[[ expr ]]`            -> `'[[' WORDS ']]'`: one command named `[[`; the
        operators `&&` `||` `(` `)` `<` `>` are quoted, a `=~` regex and an
        extglob group are backslash-escaped, so none becomes a list, a group
        or a redirect.
    `case W in p|q) A;; r) B;; esac`
                            -> `if 'case' W p q r; then A; elif :; then B; fi`
        (the walker joins the branches' variables and cwd after an `if`).
    `select x in ...; do`   -> `for x in ...; do`
    `coproc [NAME] cmd`     -> `cmd`
    `a=(x "$y")`, `a+=(..)` -> `a=<OPEN>x<SEP>"$y"`: one assignment word, whose
        elements the walker expands into the array (see `guardian.arrays`).

Every word is copied verbatim apart from that quoting: `$(..)`, backticks,
`<(..)`, `${..}` and quotes stay as written, and the bodies of `$(..)` and
backticks are rewritten recursively, so every command that can run is still
seen by bashlex. Anything this scanner does not understand (a heredoc, `;&`,
a comment inside `[[ ]]`, unbalanced text) leaves the text unchanged; bashlex
then refuses it and the check fails closed.
"""

from __future__ import annotations

import re

from tether.guardian.arrays import ARRAY_OPEN, ARRAY_SEP
from tether.guardian.lexer import META, TRIGGER, Lexer, Unsupported, unsupported

_HEREDOC = re.compile(r"(?<!<)<<(?!<)")
_REDIRECTS = frozenset({"&>>", "<<<", "&>", ">>", ">&", ">|", "<>", "<&", "<", ">"})
_COMMAND_NEXT = frozenset({"then", "do", "else", "elif", "if", "while", "until", "!", "{", "time"})
_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
_ARRAY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_NAMED_COPROC = re.compile(r"[A-Za-z_][A-Za-z0-9_]*[ \t]+(?=[{(])")
_LIST_OPS = frozenset({"&&", "||", "&", "|&"})
_COND_OPS = frozenset({"&&", "||", "(", ")", "<", ">"})
_C_FOR = re.compile(r"for[ \t]*\(\(")


def rewrite(text: str) -> str:
    """The text with `[[ ]]`, case, select, coproc and arrays made parseable for bashlex."""
    if not TRIGGER.search(text) or _HEREDOC.search(text):
        return text
    try:
        return _Scanner(text).commands(0, "eof")[1]
    except (Unsupported, RecursionError):
        return text


class _Scanner(Lexer):
    lists = 0
    """`&&`, `||`, `&` and `|&` operators read so far (see `guardian.lift`)."""

    def commands(self, i: int, stop: str) -> tuple[int, str, str]:
        """Rewrite a command list from `i` up to `stop` ("eof", ")" or "case").

        Returns the index reached, the rewritten text and what stopped it.
        """
        s, out = self.s, []
        at_cmd, target, depth, fname = True, False, 0, False
        while True:
            j = self._blanks(i)
            out.append(s[i:j])
            i = j
            if i >= self.n:
                if stop != "eof" or depth:
                    unsupported("unterminated")
                return i, "".join(out), "eof"
            if s[i] == "#":
                while i < self.n and s[i] != "\n":
                    i += 1
                continue
            op = self._op(i)
            if op:
                if op in ("<<", "<<-"):
                    unsupported("heredoc")
                if op in (";;", ";&", ";;&"):
                    if stop == "case" and not depth and op == ";;":
                        return i, "".join(out), op
                    unsupported(op)
                i += len(op)
                self.lists += op in _LIST_OPS
                if op in _REDIRECTS:
                    out.append(op)
                    target = True
                    continue
                if op == ")":
                    if not depth:
                        if stop == ")":
                            return i, "".join(out), ")"
                        unsupported("unbalanced )")
                    depth -= 1
                    at_cmd = False
                elif op == "(":
                    arith = self.arith_command(i + 1) if at_cmd and s.startswith("(", i) else None
                    if arith is not None:
                        i, text = arith
                        out.append(text)
                        at_cmd = False
                        continue
                    if re.match(r"[ \t]*\)", s[i:]):  # function definition `name ()`
                        j = s.index(")", i) + 1
                        op, i, at_cmd = s[i - 1 : j], j, True
                    elif at_cmd:
                        depth += 1
                    else:
                        unsupported("unexpected (")
                else:
                    at_cmd = True
                out.append(op)
                continue
            kw = self._keyword(i) if at_cmd and not target else ""
            m = _C_FOR.match(s, i) if at_cmd and not target else None
            if m:
                arith = self.arith_command(m.end())
                if arith is None:
                    unsupported("for (( without ))")
                i, text = arith
                out.append("while " + text)
                at_cmd = False
                continue
            if kw == "esac" and stop == "case" and not depth:
                return i, "".join(out), "esac"
            if kw == "[[":
                i, text = self.cond(i + 2)
                out.append(text)
                at_cmd = False
                continue
            if kw == "case":
                i, text = self.case(i + 4)
                out.append(text)
                at_cmd = False
                continue
            if kw == "select":
                out.append("for   ")
                i, at_cmd = i + 6, False
                continue
            if kw == "coproc":
                out.append(" " * 6)
                j = self._blanks(i + 6)
                if j >= self.n or s[j] in ";&|)\n":
                    unsupported("coproc without a command")
                m = _NAMED_COPROC.match(s, j)
                i = m.end() if m else j
                continue
            j, word = self.word(i, "normal")
            if j == i:
                unsupported(f"unexpected {s[i]!r}")
            raw, i = s[i:j], j
            if not target and s.startswith("(", i) and _ARRAY.fullmatch(raw):
                i, elements = self.array(i + 1)
                out.append(word + elements)
                continue
            out.append(word)
            if target:
                target = False
            elif fname:
                fname, at_cmd = False, True
            elif at_cmd:
                fname = raw == "function"
                at_cmd = raw in _COMMAND_NEXT or bool(_ASSIGN.match(raw))

    def arith_command(self, i: int) -> tuple[int, str] | None:
        """From just after `((` at a command: (end past `))`, `'((' "EXPR" '))'`).

        None when the parens close singly (`((a); b)` is two subshells). The
        expression goes into double quotes so its `$(..)`, backticks and
        `${..}` stay visible to the walker; quotes or backslashes in it are
        not supported (bashlex then refuses the text: fail closed).
        """
        s, out, depth, j = self.s, [], 0, i
        while j < self.n:
            c = s[j]
            if c in "\"'\\":
                unsupported(f"{c!r} in (( ))")
            if c in "$`":
                k = self._unit(j, out)
                if k >= 0:
                    j = k
                    continue
            if c == "(":
                depth += 1
            elif c == ")":
                if not depth:
                    if s.startswith("))", j):
                        return j + 2, "'((' \"" + "".join(out) + "\" '))'"
                    return None
                depth -= 1
            out.append(c)
            j += 1
        return unsupported("unterminated ((")

    def cond(self, i: int) -> tuple[int, str]:
        """From just after `[[`: (end past `]]`, `'[[' WORDS ']]'`)."""
        s, out, prev = self.s, ["'[['"], ""
        while True:
            i = self._blanks(i, newlines=True)
            if i >= self.n:
                unsupported("unterminated [[")
            if s.startswith("]]", i) and (i + 2 == self.n or s[i + 2] in META):
                out.append("']]'")
                return i + 2, " ".join(out)
            op = self._op(i)
            if op in _COND_OPS:
                out.append(f"'{op}'")
                i, prev = i + len(op), op
                continue
            if op or s[i] == "#":
                unsupported(f"{op or '#'} inside [[ ]]")
            j, word = self.word(i, "regex" if prev == "=~" else "pattern")
            if j == i:
                unsupported("empty word in [[ ]]")
            out.append(word)
            i, prev = j, s[i:j]

    def case(self, i: int) -> tuple[int, str]:
        """From just after `case`: (end past `esac`, the if/elif form)."""
        s = self.s
        i = self._blanks(i)
        i, subject = self.word(i, "normal")
        i = self._blanks(i, newlines=True)
        if self._keyword(i) != "in":
            unsupported("case without in")
        tests, bodies = ["'case'", subject], []
        i += 2
        while True:
            i = self._blanks(i, newlines=True)
            if s.startswith("#", i):
                i = s.find("\n", i) if "\n" in s[i:] else self.n
                continue
            if self._keyword(i) == "esac":
                i += 4
                break
            if s.startswith("(", i):
                i = self._blanks(i + 1)
            while True:
                j, pattern = self.word(i, "pattern")
                if j == i:
                    unsupported("empty case pattern")
                tests.append(pattern)
                i = self._blanks(j)
                if s.startswith("|", i) and not s.startswith("||", i):
                    i = self._blanks(i + 1)
                    continue
                if s.startswith(")", i):
                    i += 1
                    break
                unsupported("bad case pattern")
            i, body, term = self.commands(i, "case")
            bodies.append(body if body.strip() else ":")
            if term == "esac":
                i += 4
                break
            i += len(term)
        head = " ".join(tests)
        if not bodies:
            return i, head
        return i, f"if {head}; then\n" + "\nelif :; then\n".join(bodies) + "\nfi"

    def array(self, i: int) -> tuple[int, str]:
        """From just after `NAME=(`: (end past `)`, OPEN + elements joined by SEP)."""
        s, elements = self.s, []
        while True:
            i = self._blanks(i, newlines=True)
            if s.startswith("#", i):
                i = s.find("\n", i) if "\n" in s[i:] else self.n
                continue
            if i >= self.n:
                unsupported("unterminated array")
            if s[i] == ")":
                i += 1
                break
            j, word = self.word(i, "normal")
            if j == i:
                unsupported(f"{s[i]!r} in an array")
            elements.append(word)
            i = j
        if i < self.n and s[i] not in META:
            unsupported("text after an array")
        return i, ARRAY_OPEN + ARRAY_SEP.join(elements)
