"""Parse a command line with bashlex and flatten it into simple commands.

Parts:
    Walker: walks every node kind bashlex produces (lists, pipelines,
        subshells, groups, loops, conditionals, functions, command and process
        substitution in words, assignments and redirect targets, heredocs),
        tracking variables and arrays assigned and `cd` done earlier in the
        same line. After an `if` (and a rewritten `case`) a variable or cwd
        that differs between the branches becomes UNKNOWN.
    parse_line: text -> list[Simple]; raises on anything bashlex cannot parse.

Errors are not caught here: the caller turns any of them into a deny.
"""

from __future__ import annotations

import re

from tether.guardian import arrays, heredocs
from tether.guardian.bashlex_load import bashlex
from tether.guardian.prepare import fast_split, prepare, track
from tether.guardian.shell import DepthError, Redirect, Simple, State
from tether.guardian.words import UNKNOWN, SubstEval, expand_joined, expand_word

__all__ = ["DepthError", "Redirect", "Simple", "Walker", "parse_line"]
_INDEXED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[[^\]]*\]\+?=")
_BODY = re.compile(re.escape(heredocs.MARK) + r"(\d+)")
_PWD = re.compile(r"\s*(?:/bin/)?pwd(?:\s+-[LP])?\s*")
_DECLARE = frozenset({"export", "declare", "typeset", "local", "readonly"})


class Walker:
    """Collects Simple commands from a bashlex tree."""

    def __init__(self, source: str, subst: SubstEval, max_nodes: int = 4000) -> None:
        self.src = source
        self.subst = subst
        self.out: list[Simple] = []
        self.budget = max_nodes
        self.quoted: list[str] = []
        self.pending: list[str] = []
        """Text of `${x:-$(cmd)}` defaults and lifted bodies, for the next command."""
        self.lifted: dict[str, list[str]] = {}
        self.seen: set[str] = set()
        self.bodies: list[heredocs.Body] = []
        """Heredocs cut out of the line (`guardian.heredocs`), by marker number."""

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
        if kind == "if":
            return self._if(node, st)
        if kind in ("while", "until"):
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
                key = self._text(part.command) if self.lifted else ""
                if key in self.lifted:
                    self.seen.add(key)
                    self.pending.extend(self.lifted[key])
                else:
                    for inner in self.walk(part.command, st.copy()):
                        inner.captured = True
            elif part.kind == "parameter" and ("$(" in part.value or "`" in part.value):
                self.pending.append(part.value)
            elif part.kind == "parameter" and part.value.endswith("@P"):
                value = st.env.get(part.value[:-2], UNKNOWN)  # prompt expansion runs $(..) in the value
                if "$(" in value or "`" in value or UNKNOWN in value:
                    self.pending.append(value if UNKNOWN not in value else "$(__unknown_prompt__)")
            else:
                self._nested(part, st)

    def _at(self, st: State) -> SubstEval:
        """The substitution evaluator at this point of the line: `$(pwd)` is the cwd the walker
        follows here (after `cd`s; unknown where it lost track), as trustworthy as a relative path."""
        def evaluate(body: str) -> str | None:
            if _PWD.fullmatch(body):
                return st.cwd if st.cwd.startswith("/") and UNKNOWN not in st.cwd else None
            return self.subst(body)

        return evaluate

    def _expand(self, node: object, st: State) -> list[str]:
        self._nested(node, st)
        return expand_word(self._text(node), st.env, st.home, self._at(st))

    def _command(self, node: object, st: State) -> list[Simple]:
        assigns: dict[str, str] = {}
        argv: list[str] = []
        redirects: list[Redirect] = []
        stdin: str | None = None
        payloads: list[str] = []
        declared: list[tuple[str, list[str]]] = []
        for part in node.parts:  # type: ignore[attr-defined]
            text = self._text(part) if part.kind in ("word", "assignment") else ""
            if not argv and (part.kind == "assignment" or _INDEXED.match(text)):
                self._nested(part, st)
                self._assign(text, assigns, st)
            elif arrays.ARRAY_OPEN in text:
                self._nested(part, st)
                lhs, _, raw = text.partition("=")
                items = self._elements(raw, {**st.env, **assigns}, st)
                argv.append(f"{lhs}={' '.join(items)}")
                declared.append((lhs, items))
            elif part.kind in ("word", "assignment"):
                scope = st if not assigns else State({**st.env, **assigns}, st.cwd, st.home)
                argv.extend(self._expand(part, scope))
            elif part.kind == "redirect":
                r, body = self._redirect(part, st)
                redirects.append(r)
                if body is not None:
                    stdin = body
                    name = self._text(part.output)
                    if r.op.startswith("<<") and r.op != "<<<" and ("$(" in body or "`" in body) \
                            and name not in self.quoted and not _BODY.fullmatch(name):
                        units = heredocs.substitutions(body)  # what the body expands, not the body
                        payloads.extend([body] if units is None else [f'echo "{u}"' for u in units])
        if not argv:
            st.env.update(assigns)
            simple = Simple([], redirects, dict(st.env), st.cwd, stdin, in_function=st.function)
            return self._emit(simple)
        env = {**st.env, **assigns}
        simple = Simple(argv, redirects, env, st.cwd, stdin, in_function=st.function,
                        payloads=payloads)
        track(argv, st, stdin, assigns.get("IFS"), assigns.get("CDPATH"))
        if argv[0] in _DECLARE:
            for lhs, items in declared:
                arrays.assign_array(st.env, lhs, items, st.env)
        return self._emit(simple)

    def _assign(self, text: str, assigns: dict[str, str], st: State) -> None:
        """`a=v`, `a+=v`, `a[i]=v` or a rewritten `a=(..)` before the command name."""
        lhs, _, raw = text.partition("=")
        merged = {**st.env, **assigns}
        if raw.startswith(arrays.ARRAY_OPEN):
            arrays.assign_array(assigns, lhs, self._elements(raw, merged, st), merged)
        else:
            arrays.assign(assigns, lhs, expand_joined(raw, merged, st.home, self._at(st)), merged)

    def _elements(self, raw: str, env: dict[str, str], st: State) -> list[str]:
        """The elements of a rewritten `(x "$y" $(z))` (after its OPEN marker)."""
        body = raw[1:] if raw.startswith(arrays.ARRAY_OPEN) else raw
        words = body.split(arrays.ARRAY_SEP) if body else []
        if any(arrays.KEYED.match(w) for w in words):
            return [UNKNOWN]
        return [f for w in words for f in expand_word(w, env, st.home, self._at(st))]

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
        m = _BODY.fullmatch(self._text(out)) if op == "<" and self.bodies else None
        if m:
            body = self.bodies[int(m.group(1))]
            self.pending.extend(f'echo "{u}"' for u in body.substitutions)
            return Redirect("<<", body.text, fd), body.text
        words = self._expand(out, st)
        target = " ".join(words) if words else ""
        if op == "<<<":
            return Redirect(op, target, fd), target
        raw = self._text(out)
        return Redirect(op, target, fd, computed="$(" in raw or "`" in raw or "<(" in raw), None

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
        inner.env.pop("@", None)
        inner.env.pop("@[@]", None)  # `$1`.. inside a function are its call's arguments
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
            arrays.assign(st.env, var, item, st.env)
            produced += [s for b in bodies for s in self.walk(b, st)]
        return produced


    def _if(self, node: object, st: State) -> list[Simple]:
        """Conditions run in turn; each branch starts from the state its condition left."""
        produced: list[Simple] = []
        exits: list[State] = []
        branch = st
        for p in node.parts:  # type: ignore[attr-defined]
            if p.kind == "reservedword":
                if p.word in ("then", "else"):
                    branch = st.copy() if p.word == "then" else st
                    exits.append(branch)
                elif p.word == "elif":
                    branch = st
                continue
            produced += self.walk(p, branch)
        if not any(e is st for e in exits):
            exits.append(st)
        _join(st, exits)
        return produced


def _join(st: State, exits: list[State]) -> None:
    """`st` becomes what holds after any of `exits`: values that differ are UNKNOWN."""
    keys = {k for e in exits for k in e.env}
    env = {}
    for k in keys:
        values = {e.env.get(k) for e in exits}
        value = values.pop() if len(values) == 1 else arrays.unknown(k)
        if value is not None:
            env[k] = value
    st.env.clear()
    st.env.update(env)
    cwds = {e.cwd for e in exits}
    st.cwd = cwds.pop() if len(cwds) == 1 else UNKNOWN


def parse_line(text: str, env: dict[str, str], cwd: str, home: str,
               subst: SubstEval) -> tuple[list[Simple], list[str]]:
    """Flatten `text` into simple commands (and the quoted heredoc delimiters).

    Lifted substitution bodies (`guardian.lift`) become payloads of the command
    they appear in; a placeholder never met by the walk is an error. A line
    with heredocs that fails to parse is tried once more with their bodies cut
    out (`guardian.heredocs`); if that fails too, the first error stands.
    """
    try:
        return _parse(text, env, cwd, home, subst, [])
    except (bashlex.errors.ParsingError, NotImplementedError) as first:
        cut = heredocs.cut(text) if "<<" in text else None
        if cut is None:
            raise
        try:
            return _parse(cut[0], env, cwd, home, subst, cut[1])
        except (bashlex.errors.ParsingError, NotImplementedError):
            raise first from None


def _parse(text: str, env: dict[str, str], cwd: str, home: str, subst: SubstEval,
           bodies: list[heredocs.Body]) -> tuple[list[Simple], list[str]]:
    text, extra, lifted = prepare(text)
    st = State(dict(env), cwd, home)
    fast = fast_split(text, st)
    if fast is not None:
        return fast, extra
    walker = Walker(text, subst)
    walker.quoted, walker.lifted, walker.bodies = extra, lifted, bodies
    for tree in bashlex.parse(text):
        walker.walk(tree, st)
    if walker.pending:
        walker._emit(Simple([], env=dict(st.env), cwd=st.cwd))
    if set(lifted) - walker.seen:
        msg = "a lifted command substitution was not analysed"
        raise NotImplementedError(msg)
    return walker.out, extra
