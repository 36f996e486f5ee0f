"""Parse a command line with bashlex and flatten it into simple commands.

Parts:
    Redirect, Simple: what one simple command would do (argv, redirects, stdin).
    Walker: walks every node kind bashlex produces (lists, pipelines,
        subshells, groups, loops, conditionals, functions, command and process
        substitution in words, assignments and redirect targets, heredocs),
        tracking variables assigned and `cd` done earlier in the same line.
    parse_line: text -> list[Simple]; raises on anything bashlex cannot parse.

Errors are not caught here: the caller turns any of them into a deny.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

import bashlex

from guardian.paths import normalise
from guardian.words import UNKNOWN, SubstEval, expand_joined, expand_word

_PLAIN = re.compile(r"[A-Za-z0-9 \t._/,:@+%=^*?\[\]'\"|;&-]*")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_SEPARATORS = frozenset({"|", "||", "&&", ";"})
_RESERVED = frozenset({"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done",
                       "case", "esac", "function", "select", "time", "{", "}", "!", "[[", "]]",
                       "coproc", "in"})
_ARITH = re.compile(r"\$\(\(")
_QUOTED_HEREDOC = re.compile(r"(?<!<)<<(?!<)(-?)\s*(?:'([^'\n]+)'|\"([^\"\n]+)\"|\\(\w+))")
_TIME = re.compile(r"(^|[;&|({\n]|&&|\|\|)(\s*)time(\s+-p)?(?=\s)")
_WRITE_OPS = {">", ">>", ">|", "&>", "&>>", "<>", ">&"}


class DepthError(RecursionError):
    """Nesting deeper than the configured maximum."""


@dataclass(slots=True)
class Redirect:
    """One redirection: operator, expanded target (or heredoc text), fd."""

    op: str
    target: str
    fd: int | None = None

    @property
    def writes(self) -> bool:
        return self.op in _WRITE_OPS and not self.target.isdigit() and self.target != "-"


@dataclass(slots=True)
class Simple:
    """One simple command after expansion, with what feeds it."""

    argv: list[str]
    redirects: list[Redirect] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = "/"
    stdin: str | None = None
    """Literal heredoc / herestring text fed to the command."""
    upstream: list[Simple] = field(default_factory=list)
    """Commands of the previous pipeline stage (their stdout is our stdin)."""
    in_function: str = ""
    payloads: list[str] = field(default_factory=list)
    """Shell text executed by expansion (heredoc `$(..)`, arithmetic `$(..)`)."""


@dataclass(slots=True)
class State:
    env: dict[str, str]
    cwd: str
    home: str
    function: str = ""

    def copy(self) -> State:
        return State(dict(self.env), self.cwd, self.home, self.function)


def prepare(text: str) -> tuple[str, list[str]]:
    """Rewrite what bashlex cannot parse but the guardian can judge.

    Quoted heredoc delimiters (`<<'EOF'`) lose their quotes (bashlex rejects
    them); their names are returned so the body is not read for `$(..)`.

    `$((expr))` without command substitution inside becomes `0` (arithmetic
    runs nothing); `time` becomes blanks (it only times its pipeline). With a
    `$(`, backtick or process substitution inside, arithmetic is left alone so
    bashlex refuses it and the check fails closed.
    """
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
            out.append(text[i : m.start()] + "0")
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
    return text, extra


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
            raise DepthError("command too large to analyse")
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
        raise NotImplementedError(f"unsupported construct: {kind}")

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
        self._track(argv, st)
        return self._emit(simple)

    def _emit(self, simple: Simple) -> list[Simple]:
        if self.pending:
            simple.payloads.extend(self.pending)
            self.pending = []
        self.out.append(simple)
        return [simple]

    def _track(self, argv: list[str], st: State) -> None:
        """Carry `cd` and `export`/`declare` effects to later commands in the line."""
        args = argv[1:]
        if argv[0] == "builtin" and args:
            argv, args = args, args[1:]
        if argv[0] in ("cd", "pushd"):
            dest = next((a for a in args if not a.startswith("-")), st.home)
            st.cwd = UNKNOWN if UNKNOWN in dest else normalise(dest, st.cwd, st.home)
        elif argv[0] in ("export", "declare", "typeset", "local", "readonly"):
            for a in args:
                if "=" in a and not a.startswith("-"):
                    k, _, v = a.partition("=")
                    st.env[k] = v

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
    fast = _fast(text, st)
    if fast is not None:
        return fast, extra
    walker = Walker(text, subst)
    walker.quoted = extra
    for tree in bashlex.parse(text):
        walker.walk(tree, st)
    return walker.out, extra


def _fast(text: str, st: State) -> list[Simple] | None:
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
        Walker(text, lambda _b: None)._track(argv, st)
        previous = [simple] if tok == "|" else []
        argv = []
    return out

