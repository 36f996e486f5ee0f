"""Parse a command line with bashlex and flatten it into simple commands.

Parts:
    Walker: walks every node kind bashlex produces (lists, pipelines,
        subshells, groups, loops, conditionals, functions, command and process
        substitution in words, assignments and redirect targets, heredocs),
        tracking variables assigned and `cd` done earlier in the same line.
    parse_line: text -> list[Simple]; raises on anything bashlex cannot parse.

Errors are not caught here: the caller turns any of them into a deny.
"""

from __future__ import annotations

import bashlex

from guardian.prepare import fast_split, prepare, track
from guardian.shell import DepthError, Redirect, Simple, State
from guardian.words import UNKNOWN, SubstEval, expand_joined, expand_word

__all__ = ["DepthError", "Redirect", "Simple", "Walker", "parse_line"]


class Walker:
    """Collects Simple commands from a bashlex tree."""

    def __init__(self, source: str, subst: SubstEval, max_nodes: int = 4000) -> None:
        self.src = source
        self.subst = subst
        self.out: list[Simple] = []
        self.budget = max_nodes
        self.quoted: list[str] = []
        self.pending: list[str] = []
        """Text of `${x:-$(cmd)}` defaults: bashlex leaves them unparsed."""

    def walk(self, node: object, st: State) -> list[Simple]:
        """Walk one node; returns the simple commands it produced."""
        self.budget -= 1
        if self.budget < 0:
            msg = "command too large to analyse"
            raise DepthError(msg)
        kind = node.kind  # type: ignore[attr-defined]
        if kind == "command":
            return self._command(node, st)
        if kind == "pipeline":
            return self._pipeline(node, st)
        if kind == "list":
            return [s for p in node.parts if p.kind not in ("operator",) for s in self.walk(p, st)]  # type: ignore[attr-defined]
        if kind == "compound":
            return self._compound(node, st)
        if kind == "function":
            return self._function(node, st)
        if kind in ("if", "while", "until"):
            return [s for p in node.parts if p.kind != "reservedword" for s in self.walk(p, st)]  # type: ignore[attr-defined]
        if kind == "for":
            return self._for(node, st)
        if kind in ("reservedword", "operator", "pipe"):
            return []
        msg = f"unsupported construct: {kind}"
        raise NotImplementedError(msg)

    def _text(self, node: object) -> str:
        a, b = node.pos  # type: ignore[attr-defined]
        return self.src[a:b]

    def _nested(self, node: object, st: State) -> None:
        """Walk command/process substitutions anywhere below a word node."""
        for part in getattr(node, "parts", None) or []:
            if part.kind in ("commandsubstitution", "processsubstitution"):
                self.walk(part.command, st.copy())
            elif part.kind == "parameter" and ("$(" in part.value or "`" in part.value):
                self.pending.append(part.value)
            else:
                self._nested(part, st)

    def _expand(self, node: object, st: State) -> list[str]:
        self._nested(node, st)
        return expand_word(self._text(node), st.env, st.home, self.subst)

    def _command(self, node: object, st: State) -> list[Simple]:
        assigns: dict[str, str] = {}
        argv: list[str] = []
        redirects: list[Redirect] = []
        stdin: str | None = None
        payloads: list[str] = []
        for part in node.parts:  # type: ignore[attr-defined]
            if part.kind == "assignment" and not argv:
                self._nested(part, st)
                name, _, raw = self._text(part).partition("=")
                merged = {**st.env, **assigns}
                assigns[name.rstrip("+")] = expand_joined(raw, merged, st.home, self.subst)
            elif part.kind in ("word", "assignment"):
                scope = st if not assigns else State({**st.env, **assigns}, st.cwd, st.home)
                argv.extend(self._expand(part, scope))
            elif part.kind == "redirect":
                r, text = self._redirect(part, st)
                redirects.append(r)
                if text is not None:
                    stdin = text
                    if r.op.startswith("<<") and r.op != "<<<" and ("$(" in text or "`" in text) \
                            and self._text(part.output) not in self.quoted:
                        payloads.append(text)
        if not argv:
            st.env.update(assigns)
            simple = Simple([], redirects, dict(st.env), st.cwd, stdin, in_function=st.function)
            return self._emit(simple)
        env = {**st.env, **assigns}
        simple = Simple(argv, redirects, env, st.cwd, stdin, in_function=st.function,
                        payloads=payloads)
        track(argv, st)
        return self._emit(simple)

    def _emit(self, simple: Simple) -> list[Simple]:
        if self.pending:
            simple.payloads.extend(self.pending)
            self.pending = []
        self.out.append(simple)
        return [simple]

    def _redirect(self, node: object, st: State) -> tuple[Redirect, str | None]:
        op = node.type  # type: ignore[attr-defined]
        fd = node.input if isinstance(getattr(node, "input", None), int) else None  # type: ignore[attr-defined]
        out = node.output  # type: ignore[attr-defined]
        heredoc = getattr(node, "heredoc", None)
        if heredoc is not None:
            body = heredoc.value.rsplit("\n", 1)[0] if "\n" in heredoc.value else ""
            return Redirect(op, body, fd), body
        if isinstance(out, int):
            return Redirect(op, str(out), fd), None
        words = self._expand(out, st)
        target = " ".join(words) if words else ""
        if op == "<<<":
            return Redirect(op, target, fd), target
        return Redirect(op, target, fd), None

    def _pipeline(self, node: object, st: State) -> list[Simple]:
        produced: list[Simple] = []
        previous: list[Simple] = []
        for part in node.parts:  # type: ignore[attr-defined]
            if part.kind in ("pipe", "reservedword"):
                continue
            stage = self.walk(part, st.copy())
            if previous:
                for s in stage:
                    s.upstream = previous
            previous = stage
            produced.extend(stage)
        return produced

    def _compound(self, node: object, st: State) -> list[Simple]:
        parts = node.list  # type: ignore[attr-defined]
        subshell = bool(parts) and parts[0].kind == "reservedword" and parts[0].word == "("
        inner = st.copy() if subshell else st
        produced = [s for p in parts if p.kind != "reservedword" for s in self.walk(p, inner)]
        redirects = [self._redirect(r, st)[0] for r in getattr(node, "redirects", None) or []]
        if redirects:
            produced += self._emit(Simple([], redirects, dict(st.env), st.cwd))
        return produced

    def _function(self, node: object, st: State) -> list[Simple]:
        name = self._text(node.parts[0])  # type: ignore[attr-defined]
        inner = st.copy()
        inner.function = name
        return [s for p in node.parts[1:] if p.kind not in ("reservedword",)  # type: ignore[attr-defined]
                for s in self.walk(p, inner)]

    def _for(self, node: object, st: State) -> list[Simple]:
        parts = [p for p in node.parts if p.kind != "reservedword"]  # type: ignore[attr-defined]
        words = [p for p in parts if p.kind == "word"]
        bodies = [p for p in parts if p.kind != "word"]
        var = self._text(words[0]) if words else "_"
        items = [f for w in words[1:] for f in self._expand(w, st)] or [UNKNOWN]
        produced: list[Simple] = []
        for item in items[:4] if len(items) <= 4 else [UNKNOWN]:
            st.env[var] = item
            produced += [s for b in bodies for s in self.walk(b, st)]
        return produced


def parse_line(text: str, env: dict[str, str], cwd: str, home: str,
               subst: SubstEval) -> tuple[list[Simple], list[str]]:
    """Flatten `text` into simple commands (and the quoted heredoc delimiters)."""
    text, extra = prepare(text)
    st = State(dict(env), cwd, home)
    fast = fast_split(text, st)
    if fast is not None:
        return fast, extra
    walker = Walker(text, subst)
    walker.quoted = extra
    for tree in bashlex.parse(text):
        walker.walk(tree, st)
    return walker.out, extra
