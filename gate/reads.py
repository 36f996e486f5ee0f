"""Which files a command shows the content of (R04), from the parsed command.

Parts: `Reads` (what one command line showed, and which files it copied
content into), `analyse(command)`, `content_reads(command)` and
`reads_path()`. A read counts only when the content reaches the run's
output: `cat f`, `head f`, `sed -n 1p f`, `grep PAT f`, `awk '{print}' f`,
`cat < f`, `cat f | sort`, `echo "$(cat f)"`, `while read l; do echo "$l";
done < f`, `python3 -c
"print(open('f').read())"` show `f`. Naming a file is no read (`ls f`,
`echo f`, `test -e f`, `stat f`), nor is running it (`bash f.sh`), nor a
digest or a comparison (`md5sum`, `cmp`, `diff -q`), nor a command that
shows nothing of it: `head -n 0`, `tail -c 0`, `sed -n q`, `sed -i`,
`grep -q`/`-l`/`-m 0`, output sent to /dev/null
(`cat f > /dev/null`, `exec >/dev/null; cat f`), into a sink (`cat f | true`,
`cat f | wc -l`, `< f true`) or into a file: `cat f > g` (or `cp f g`,
`tee g`) shows `f` only if `g` is shown later, which `Reads.into` records
for R04. Counts (`wc`, `grep -c`, `awk 'END{print NR}'`) are the one
derived output kept as a read: the run saw a number computed from the
content, which is what a step reporting "3 lines" claims.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from tether.guardian.bashlex_load import bashlex
from tether.guardian.constructs import rewrite

SHOWS = frozenset({
    "cat", "tac", "head", "tail", "less", "more", "nl", "od", "xxd", "hexdump", "strings", "sort", "uniq", "cut",
    "paste", "fold", "fmt", "column", "jq", "yq", "base64", "base32", "diff", "comm", "tr", "rev", "iconv", "bat",
    "expand", "unexpand", "pr", "tee", "wc",
})
"""Programs that print (some of) the content of their input files, or of stdin without operands. `wc` prints
only counts: the weakest read, kept because a step that reports "3 lines" saw what it reports."""
PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "rg", "sed", "awk", "gawk", "mawk"})
"""Programs whose first operand is a pattern or script, the files after it."""
_OPTS_WITH_VALUE = {"head": {"-n", "-c"}, "tail": {"-n", "-c"}, "cut": {"-d", "-f", "-c"}, "sort": {"-k", "-t", "-o"},
                    "grep": {"-e", "-f", "-m", "-A", "-B", "-C"}, "rg": {"-e", "-m", "-g", "-t"},
                    "sed": {"-e"}, "awk": {"-F", "-v", "-f"}, "iconv": {"-f", "-t", "-o"}}
_WRAPPERS = frozenset({"sudo", "env", "timeout", "command", "nice", "stdbuf", "time", "nohup", "ionice"})
_CODE_OPEN = re.compile(r"""(?:open|read_text|read_bytes|readFileSync|File\.read|Path)\(\s*['"]([^'"]+)['"]""")
_CODE_PRINTS = re.compile(r"\b(print|pprint|console\.log|puts|say|printf)\b|stdout\.write|process\.stdout")
_SHOWN_TARGETS = frozenset({"/dev/stdout", "/dev/stderr", "/dev/fd/1", "/dev/fd/2", "/proc/self/fd/1",
                            "/proc/self/fd/2"})
_QUIET_GREP = re.compile(r"^--(quiet|silent|files-with-matches|files-without-match|files)$"
                         r"|^--max-count=0$|^-m0$|^-[A-Za-z]*[qlL][A-Za-z]*$")
"""grep options under which it prints nothing of the content (only an exit status or file names); `-c` prints a
count, kept as a read like `wc`."""
_ZERO_COUNT = re.compile(r"^(-[nc]\s*0+|--(lines|bytes)=0+|-0+)$")
"""`head`/`tail` told to print nothing (`-n 0`, `-c0`, `--lines=0`); `tail -n +0` prints everything."""


@dataclass
class Reads:
    """What one command line showed: files whose content reached the output, and content copied into files."""

    shown: set[str] = field(default_factory=set)
    into: dict[str, set[str]] = field(default_factory=dict)
    """File written -> the files whose content went into it (`cat f > g`, `cp f g`, `... | tee g`)."""


def _word(node: Any) -> str:
    return str(getattr(node, "word", ""))


def _subs(node: Any, kind: str) -> list[Any]:
    return [p.command for p in getattr(node, "parts", []) or [] if getattr(p, "kind", "") == kind]


def _operands(name: str, args: list[str]) -> tuple[list[str], list[str], str]:
    """(options, operands, pattern) of `args`; a pattern-first program's pattern or script is not an operand."""
    opts: list[str] = []
    out: list[str] = []
    takes = _OPTS_WITH_VALUE.get(name, set())
    skip = False
    pattern_given = False
    for a in args:
        if skip:
            opts[-1] += " " + a
            skip = False
            continue
        if a in takes:
            skip = True
            pattern_given = pattern_given or a in ("-e", "-f")
            opts.append(a)
            continue
        if a.startswith("-") and a != "-":
            opts.append(a)
            continue
        out.append(a)
    pattern = next((o.split(" ", 1)[1] for o in opts if o.startswith(("-e ", "-f "))), "")
    if name in PATTERN_FIRST and not pattern_given:
        pattern, out = (out[0], out[1:]) if out else ("", out)
    return opts, out, pattern


def _awk_shows(program: str) -> bool:
    """Whether an awk program prints anything computed from the records (not a BEGIN block alone)."""
    end = re.findall(r"\bEND\s*\{((?:[^{}]|\{[^{}]*\})*)\}", program)
    body = re.sub(r"\b(BEGIN|END)\s*\{(?:[^{}]|\{[^{}]*\})*\}", "", program).strip()
    if any("print" in e for e in end):
        return True
    if not body:
        return False
    return "print" in body or not re.search(r"\{", body) or bool(re.search(r"(^|[;}\s])[^{;}]+$", body))


def _sed_shows(opts: list[str], script: str) -> bool:
    if any(o.startswith(("-i", "--in-place")) for o in opts):
        return False
    quiet = any(o in ("-n", "--quiet", "--silent") or re.fullmatch(r"-[a-zA-Z]*n[a-zA-Z]*", o) for o in opts)
    if quiet:
        return bool(re.search(r"[pPl]", re.sub(r"s(.).*?\1.*?\1[gI0-9]*", "", script))) and not re.match(
            r"^\s*0\s*p", script
        )
    return not re.fullmatch(r"\s*(1\s*,\s*\$\s*)?d\s*|\s*[01]?\s*Q\s*", script)


def _shows(name: str, opts: list[str], pattern: str, files: list[str]) -> bool:
    """Whether `name` with these options prints the content of what it reads."""
    if name in ("head", "tail"):
        return not any(_ZERO_COUNT.match(o) for o in opts)
    if name in ("grep", "egrep", "fgrep", "rg"):
        return not any(_QUIET_GREP.match(o.split(" ")[0]) or o.replace(" ", "") in ("-m0", "--max-count=0")
                       for o in opts)
    if name == "sed":
        return _sed_shows(opts, pattern)
    if name in ("awk", "gawk", "mawk"):
        return _awk_shows(pattern)
    if name == "sort":
        return not any(o.startswith(("-o", "--output", "-c", "-C", "--check")) for o in opts)
    if name == "diff":
        return not any(o in ("-q", "--brief") for o in opts)
    if name in ("jq", "yq"):
        return files[:1] != ["empty"]
    if name == "iconv":
        return not any(o.startswith("-o") for o in opts)
    return name in SHOWS


def _programs(node: Any) -> set[str]:
    """Names of the programs a subtree runs."""
    names: set[str] = set()
    if getattr(node, "kind", "") == "command":
        words = [_word(p) for p in node.parts if p.kind == "word"]
        names.update(posixpath.basename(w) for w in words[:1])
    for attr in ("parts", "list"):
        for child in getattr(node, attr, []) or []:
            if hasattr(child, "kind"):
                names |= _programs(child)
    return names


def _echoes_lines(loop: Any) -> bool:
    """A `while read line; do echo "$line"; done` loop: it prints what it reads from stdin."""
    names = _programs(loop)
    return "read" in names and bool(names & {"echo", "printf", "cat"})


def _stdout_target(redirects: list[Any]) -> str | None:
    """Where a redirect sends stdout: None when it stays in the output, "" for nowhere, else the file."""
    for r in redirects:
        if r.type not in (">", ">>", ">|", "&>", "&>>", ">&") or getattr(r, "input", None) not in (None, 1):
            continue
        target = r.output
        if isinstance(target, int):
            continue  # >&2: stderr is in the output too
        text = target if isinstance(target, str) else _word(target)
        if text in _SHOWN_TARGETS:
            continue
        return "" if text in ("/dev/null", "-") else text
    return None


class _Line:
    """Walks one parsed line, following content from the files read to the output or into files."""

    def __init__(self) -> None:
        self.reads = Reads()
        self.hidden = False
        """`exec >/dev/null` (or into a file) hid everything after it."""

    def node(self, n: Any, stdin: set[str]) -> set[str]:
        """Files whose content `n` prints on its stdout."""
        kind = getattr(n, "kind", "")
        if kind == "pipeline":
            flow = stdin
            for p in n.parts:
                if p.kind not in ("pipe", "reservedword"):
                    flow = self.node(p, flow)
            return flow
        if kind == "list":
            out: set[str] = set()
            for p in n.parts:
                if p.kind != "operator":
                    out |= self.node(p, stdin)
            return out
        if kind == "compound":
            redirects = getattr(n, "redirects", []) or []
            given = [{_word(r.output)} for r in redirects if r.type in ("<", "<>") and hasattr(r.output, "word")]
            cin = given[-1] if given else stdin
            out = set()
            for p in n.list:
                if p.kind in ("while", "until") and _echoes_lines(p):
                    out |= cin
                if p.kind not in ("reservedword", "redirect"):
                    out |= self.node(p, cin)
            return self.redirect(out, redirects)
        if kind == "command":
            return self.command(n, stdin)
        if kind == "function":  # a definition runs nothing
            return set()
        out = set()
        for p in getattr(n, "parts", []) or []:  # if, for, while: their bodies print to the line's stdout
            if p.kind not in ("reservedword", "operator", "word"):
                out |= self.node(p, set())
        return out

    def redirect(self, out: set[str], redirects: list[Any]) -> set[str]:
        """Where stdout goes: the line's output (returned), nowhere, or into a file (`Reads.into`)."""
        target = _stdout_target(redirects)
        if target is None:
            return out
        if target:
            self.reads.into.setdefault(target, set()).update(out)
        return set()

    def command(self, n: Any, stdin: set[str]) -> set[str]:
        if self.hidden:
            return set()
        words = [p for p in n.parts if p.kind == "word"]
        redirects = [p for p in n.parts if p.kind == "redirect"]
        substituted: set[str] = set()
        for p in n.parts:
            for sub in _subs(p, "commandsubstitution"):  # consumed by the word, unless echoed below
                substituted |= self.node(sub, set())
        argv = [_word(w) for w in words]
        while argv and ("=" in argv[0] and argv[0].split("=", 1)[0].isidentifier() or argv[0] in _WRAPPERS):
            argv, words = argv[1:], words[1:]
        for r in redirects:
            if r.type in ("<", "<>") and hasattr(r.output, "word"):
                stdin = {_word(r.output)}
        name = posixpath.basename(argv[0]) if argv else ""
        if name == "exec" and len(argv) == 1:
            self.hidden = _stdout_target(redirects) is not None
            return set()
        if name in ("echo", "printf"):
            out = substituted
        elif name in ("cp", "mv") and len([a for a in argv[1:] if not a.startswith("-")]) == 2:
            src, dst = [a for a in argv[1:] if not a.startswith("-")]
            self.reads.into.setdefault(dst, set()).add(src)
            out = set()
        elif name.startswith(("python", "node", "ruby", "perl")) and any(a in ("-c", "-e") for a in argv[1:]):
            flag = "-c" if "-c" in argv else "-e"
            code = argv[argv.index(flag) + 1] if argv.index(flag) + 1 < len(argv) else ""
            out = set(_CODE_OPEN.findall(code)) if _CODE_PRINTS.search(code) else set()
        elif name in SHOWS or name in PATTERN_FIRST:
            opts, files, pattern = _operands(name, argv[1:])
            if name in ("xxd", "uniq") and len(files) == 2:  # the second operand is the output file
                self.reads.into.setdefault(files[1], set()).add(files[0])
                return set()
            if name == "tee":
                for f in files:
                    self.reads.into.setdefault(f, set()).update(stdin)
                files = []
            recursive = name == "rg" or (
                name in ("grep", "egrep", "fgrep")
                and any(a in ("--recursive", "--dereference-recursive")
                        or (a.startswith("-") and not a.startswith("--") and ("r" in a or "R" in a)) for a in opts)
            )
            if recursive:
                files = [f"{f.rstrip('/')}/**" if f not in (".", "./") else "**" for f in files] or ["**"]
            inputs = {f for f in files if f != "-"} | (stdin if not files or "-" in files else set())
            for w in words[1:]:
                for sub in _subs(w, "processsubstitution"):
                    inputs |= self.node(sub, set())
            out = inputs if _shows(name, opts, pattern, files) else set()
        else:
            out = set()
        return self.redirect(out, redirects)


def reads_path(reads: set[str], path: str) -> bool:
    """Whether `path` is among `reads`, or matched by a glob or a recursive `DIR/**` in them."""
    return path in reads or any(any(ch in r for ch in "*?[") and fnmatch.fnmatchcase(path, r) for r in reads)


def analyse(command: str) -> Reads:
    """What `command` showed of which files (as written: relative, ./ or absolute; `DIR/**` for grep -r)."""
    try:
        trees = bashlex.parse(rewrite(command))
    except Exception:  # an unparsable command proves no read
        return Reads()
    line = _Line()
    for tree in trees:
        line.reads.shown |= line.node(tree, set())
    return line.reads


def content_reads(command: str) -> set[str]:
    """Paths whose content `command` shows."""
    return analyse(command).shown
