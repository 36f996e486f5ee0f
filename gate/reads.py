"""Which files a command reads the content of (R04), from the parsed command.

Parts: `content_reads(command)`. `cat f`, `head f`, `sed -n 1p f`, `grep PAT f`,
`awk '..' f`, `wc < f`, `python3 -c "open('f').read()"` read `f`; `ls f`,
`echo f`, `test -e f`, `stat f` only name it. Redirect sources (`< f`) are
reads for any program.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from typing import Any

from tether.guardian.bashlex_load import bashlex
from tether.guardian.constructs import rewrite

READERS = frozenset({
    "cat", "tac", "head", "tail", "less", "more", "nl", "od", "xxd", "hexdump", "strings", "sort", "uniq", "cut",
    "paste", "fold", "fmt", "column", "jq", "yq", "base64", "diff", "cmp", "comm", "tr", "rev", "iconv", "bat",
    "python", "python3", "node", "ruby", "perl", "bash", "sh", "source", ".", "wc", "md5sum", "sha256sum", "view",
})
PATTERN_FIRST = frozenset({"grep", "egrep", "fgrep", "rg", "sed", "awk", "gawk", "mawk"})
"""Programs whose first operand is a pattern or script, the files after it."""
_OPTS_WITH_VALUE = {"head": {"-n", "-c"}, "tail": {"-n", "-c"}, "cut": {"-d", "-f", "-c"}, "sort": {"-k", "-t"},
                    "grep": {"-e", "-f", "-m", "-A", "-B", "-C"}, "sed": {"-e"}, "awk": {"-F", "-v", "-f"}}
_CODE_OPEN = re.compile(r"""(?:open|read_text|read_bytes|readFileSync|File\.read|Path)\(\s*['"]([^'"]+)['"]""")


def _words(node: Any) -> list[str]:
    return [str(p.word) for p in node.parts if p.kind == "word"]


def _operands(name: str, args: list[str]) -> list[str]:
    out: list[str] = []
    takes = _OPTS_WITH_VALUE.get(name, set())
    skip = False
    pattern_given = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in takes:
            skip = True
            pattern_given = pattern_given or a in ("-e", "-f")
            continue
        if a.startswith("-") and a != "-":
            continue
        out.append(a)
    if name in PATTERN_FIRST and not pattern_given:
        out = out[1:]
    return out


def _visit(node: Any, reads: set[str]) -> None:
    kind = getattr(node, "kind", "")
    if kind == "command":
        argv = _words(node)
        for p in node.parts:
            if p.kind == "redirect" and p.type in ("<", "<>") and hasattr(p.output, "word"):
                reads.add(str(p.output.word))
            for sub in getattr(p, "parts", []) or []:
                if getattr(sub, "kind", "") in ("commandsubstitution", "processsubstitution"):
                    _visit(sub.command, reads)
        while argv and (
            "=" in argv[0]
            and argv[0].split("=", 1)[0].isidentifier()
            or argv[0] in ("sudo", "env", "timeout", "command", "nice")
        ):
            argv = argv[1:]
        if not argv:
            return
        name = posixpath.basename(argv[0])
        if name.startswith(("python", "node", "ruby", "perl")) and any(a in ("-c", "-e") for a in argv[1:]):
            code = argv[argv.index("-c" if "-c" in argv else "-e") + 1] if len(argv) > 2 else ""
            reads.update(_CODE_OPEN.findall(code))
            return
        if name in READERS or name in PATTERN_FIRST:
            found = _operands(name, argv[1:])
            recursive = name == "rg" or (
                name in ("grep", "egrep", "fgrep")
                and any(
                    a in ("--recursive", "--dereference-recursive")
                    or (a.startswith("-") and not a.startswith("--") and ("r" in a or "R" in a))
                    for a in argv[1:]
                )
            )
            if recursive:
                found = [f"{f.rstrip('/')}/**" if f not in (".", "./") else "**" for f in found] or ["**"]
            reads.update(found)
        return
    for attr in ("parts", "list"):
        for child in getattr(node, attr, []) or []:
            _visit(child, reads)
    if kind in ("commandsubstitution", "processsubstitution"):
        _visit(node.command, reads)


def reads_path(reads: set[str], path: str) -> bool:
    """Whether `path` is among `reads`, or matched by a glob or a recursive `DIR/**` in them."""
    return path in reads or any(any(ch in r for ch in "*?[") and fnmatch.fnmatchcase(path, r) for r in reads)


def content_reads(command: str) -> set[str]:
    """Paths whose content `command` reads (as written: relative, ./ or absolute); `DIR/**` for a recursive grep."""
    try:
        trees = bashlex.parse(rewrite(command))
    except Exception:  # an unparsable command proves no read
        return set()
    reads: set[str] = set()
    for tree in trees:
        _visit(tree, reads)
    return reads
