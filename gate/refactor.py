"""Whether the diff does the refactor a behaviour-keeping goal names, before unchanged tests count as its proof.

Parts: `refactor_gaps()`. Old tests passing before and after prove only that
behaviour was kept; a diff of one comment keeps it too. So the diff must
change code (not only comments and blank lines), and the names the goal
gives must be in the after tree: the target of "rename greet to welcome",
the function of "extract ... into a function greet(name)", the folder of
"move greet.py into src/", annotations for "add type hints"; and it must not
drop a command-line option the code spelled before. What it cannot see:
whether a rename or an extraction is complete or correct (the tests passing
is the evidence for that), behaviour dropped that no option names, or a
refactor with no name in its words.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

from tether.common.manifest import FileState
from tether.common.walk import read_rel
from tether.gate.evidence import is_generated

__all__ = ["refactor_gaps"]

MAX_TEXT = 1_000_000
MAX_FILES = 200
_RENAME = re.compile(r"(?i)\b(?:renam\w*)\s+(?:the\s+)?(?:\w+\s+)?`?([\w.-]+)`?(?:\(\))?\s+(?:to|as|into)\s+"
                     r"`?([\w.-]+)")
_INTO = re.compile(r"(?i)\b(?:extract\w*|mov\w*|split\w*|pull\w*|factor\w* out)\b(?:[^.;]|\.\w)*?\binto\s+"
                   r"(?:a |an |the |new |own |its )*(?:(?:function|method|helper|class)\s+`?([A-Za-z_]\w*)|"
                   r"`?(?!(?:a|an|the|new|own|its|one|two|single|separate|shared|common|small|private|reusable|generic|"
                   r"dedicated|local|module|standalone|pure|static|tiny|simple|its own)\b)([A-Za-z_]\w*)`?"
                   r"(?:\s*\(|\s+(?:function|method|helper|class)\b))")
_EXTRACT = re.compile(r"(?i)\bextract\w*\s+(?:a |an |the |new )*(?:(?:function|method|helper|class)\s+)?"
                      r"(?:(?:called|named)\s+)?`?(?!(?:a|an|the|new)\b)([A-Za-z_]\w*)`?\s*\(")
_MOVE_FILE = re.compile(r"(?i)\bmov\w*\s+(?:the\s+)?`?([\w./-]+\.\w+)`?\s+(?:in)?to\s+(?:a |an |the |new )*"
                        r"`?([\w./-]+?)/?`?"
                        r"(?:\s+(?:folder|directory|dir|package))?(?=[\s.,;]|$)")
_HINTS = re.compile(r"(?i)\b(type[- ]?hints?|type annotations?|annotat\w*|"
                    r"typ(e|ing) (the )?(code|module|functions?))\b")
_OPTION = re.compile(r"""["'](--?[A-Za-z][\w-]*)["'=]""")
"""A command-line option spelled in the code (`"--upper" in sys.argv`, `add_argument('--upper')`)."""
_SPACING = re.compile(r"(?i)\b(re-?format\w*|re-?indent\w*|format\w* (the |its )?(code|source|file)|whitespace|"
                      r"pep ?8|black|prettier|autopep8|indentation|line length|trailing)")
_COMMENTS = re.compile(r"(?i)\bcomment")
_LINE_COMMENT = re.compile(r"^\s*(#|//|--\s|;|\*|/\*|\*/)")


def _text(root: Path | None, rel: str) -> str | None:
    if root is None:
        return None
    data = read_rel(root, rel, MAX_TEXT)
    return None if data is None else data.decode("utf-8", "replace")


def _code(rel: str, text: str, spacing: bool = False) -> str:
    """The text without comments and blank lines (Python: its tokens without comments; others: comment lines);
    with `spacing`, each line's layout is kept (a reformat changes only that)."""
    if spacing:
        return "\n".join(line.rstrip() for line in text.splitlines() if line.strip() and not _LINE_COMMENT.match(line))
    if rel.endswith(".py"):
        try:
            toks = tokenize.generate_tokens(io.StringIO(text).readline)
            return " ".join(t.string for t in toks if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE,
                                                                     tokenize.INDENT, tokenize.DEDENT))
        except (tokenize.TokenError, SyntaxError, IndentationError):
            return text
    lines = [line.split(" #", 1)[0].rstrip() for line in text.splitlines()]
    return "\n".join(line.strip() for line in lines if line.strip() and not _LINE_COMMENT.match(line)
                     or line.startswith("#!"))


def _annotations(text: str) -> int:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return 0
    n = 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n += node.returns is not None
            n += sum(a.annotation is not None for a in [*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs])
        elif isinstance(node, ast.AnnAssign):
            n += 1
    return n


def _count(name: str, text: str) -> int:
    return len(re.findall(rf"(?<![\w]){re.escape(name)}(?![\w])", text))


def refactor_gaps(goal: str, start: dict[str, FileState], end: dict[str, FileState], workspace: Path,
                  snapshot: Path | None) -> list[str]:
    """Why the diff does not show the refactor the goal names (empty when it does, or cannot tell)."""
    changed = sorted(r for r in set(start) | set(end) if not is_generated(r)
                     and (start.get(r) is None or end.get(r) is None or start[r].sha256 != end[r].sha256))[:MAX_FILES]
    if not changed:
        return []
    before = {r: _text(snapshot, r) if r in start else "" for r in changed}
    after = {r: _text(workspace, r) if r in end else "" for r in changed}
    gaps = []
    spacing = _SPACING.search(goal) is not None  # "reformat", "re-indent": a whitespace-only diff is the change
    only_comments = all(r in start and r in end and before[r] is not None and after[r] is not None
                        and _code(r, before[r] or "", spacing) == _code(r, after[r] or "", spacing) for r in changed)
    if only_comments and not _COMMENTS.search(goal):
        gaps.append(f"the diff changes only comments or blank lines ({', '.join(changed[:3])}): the refactor the "
                    "goal asks for is not in it")
        return gaps
    old = "\n".join(t or "" for t in before.values())
    new = "\n".join(t or "" for t in after.values())
    wanted = [m.group(2).rstrip(".") for m in _RENAME.finditer(goal)]
    wanted += [m.group(1) or m.group(2) for m in _INTO.finditer(goal)]
    wanted += [m.group(1) for m in _EXTRACT.finditer(goal)]
    for name in dict.fromkeys(n for n in wanted if len(n) >= 2 and "/" not in n):
        stem = name.rsplit("/", 1)[-1]
        if "." in stem and (stem in end or any(r.endswith("/" + stem) for r in end)):
            continue  # a file the rename or split made
        if "." not in stem and _count(stem, new) <= _count(stem, old):
            gaps.append(f"the goal names {stem}, but the changed files hold it no more often than before")
    for m in _MOVE_FILE.finditer(goal):
        src, folder = m.group(1), m.group(2).strip("/")
        dest = f"{folder}/{src.rsplit('/', 1)[-1]}"
        if folder and dest not in end:
            gaps.append(f"the goal moves {src} into {folder}/, but {dest} is not in the workspace")
    dropped = sorted(set(_OPTION.findall(old)) - set(_OPTION.findall(new)))
    if dropped:
        gaps.append(f"the diff drops the option {', '.join(dropped[:3])} from the code, which users see: behaviour "
                    "changed")
    if _HINTS.search(goal):
        py = [r for r in changed if r.endswith(".py")]
        if py and sum(_annotations(after[r] or "") for r in py) <= sum(_annotations(before[r] or "") for r in py):
            gaps.append("the goal asks for type hints, but the changed Python files hold no more annotations than "
                        "before")
    return gaps
