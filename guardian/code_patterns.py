"""tcl and awk code, read by their words and patterns (see `code_script` for the others).

Parts:
    tcl_actions: `exec` words (argv words quoted, tcl's `|` and `>file` kept),
        `open "|cmd"`, `open path w`, `file delete [-force]`, `file rename/copy`.
    awk_actions: `system()`, `print | "cmd"`, `"cmd" | getline`, `print > "file"`,
        commands held in variables (ask), `|&` coprocesses and `/inet/` sockets.
"""

from __future__ import annotations

import re
import shlex

from tether.guardian.code_actions import NONLIT, Effects, literal

_TCL_CMD = re.compile(r"(?:^|[;\[\n{])\s*(exec|open|file\s+delete|file\s+rename|file\s+copy)\s+")
_TCL_REDIRECT = re.compile(r"^(?:\||\|&|&|2?>>?&?|<<?|2>@1|>@)\S*$")


def _tcl_words(code: str, i: int) -> list[object]:
    """The words of one tcl command from code[i] up to `;`, a newline or an unmatched `]`/`}`."""
    words: list[object] = []
    n = len(code)
    while i < n:
        while i < n and code[i] in " \t":
            i += 1
        if i >= n or code[i] in ";\n]}":
            break
        c, start = code[i], i
        if c in "{\"":
            close, depth, i = ("}" if c == "{" else '"'), 1, i + 1
            while i < n and depth:
                if code[i] == "\\":
                    i += 1
                elif c == "{" and code[i] == "{":
                    depth += 1
                elif code[i] == close:
                    depth -= 1
                i += 1
            body = code[start + 1 : i - 1]
            words.append(body if c == "{" or not re.search(r"[$\[]", body) else NONLIT)
            continue
        while i < n and code[i] not in " \t;\n]}":
            i += 1
        word = code[start:i]
        words.append(NONLIT if "$" in word or "[" in word else word)
    return words


def _tcl_line(words: list[object]) -> object:
    """A shell line for `exec` words: argv words quoted, tcl's `|` and `>file` words kept."""
    if not literal(words):
        return NONLIT
    return " ".join(w if _TCL_REDIRECT.match(w) else shlex.quote(w) for w in map(str, words))


def tcl_actions(code: str, fx: Effects) -> None:
    """tcl `exec` words, `open "|cmd"`, `open path w`, `file delete/rename/copy`."""
    for m in _TCL_CMD.finditer(code):
        verb, words = m.group(1).split()[0], _tcl_words(code, m.end())
        sub = m.group(1).split()[-1]
        if verb == "exec":
            while words and words[0] in ("-ignorestderr", "-keepnewline", "--"):
                words = words[1:]
            fx.shell(_tcl_line(words), "exec")
        elif verb == "open" and words:
            target = words[0]
            if isinstance(target, str) and target.startswith("|"):
                fx.shell(target[1:] if literal(target) else NONLIT, "open |")
            elif len(words) > 1 and any(c in str(words[1]) for c in "wa+") or "WRONLY" in str(words[1:]):
                fx.path("write", target, "open")
            else:
                fx.read(target)
        elif sub == "delete":
            paths = [w for w in words if w not in ("-force", "--")]
            for p in paths or [NONLIT]:
                fx.path("rdelete" if "-force" in words else "delete", p, "file delete")
        elif sub in ("rename", "copy"):
            paths = [w for w in words if w not in ("-force", "--")]
            if len(paths) >= 2:
                fx.path("move" if sub == "rename" else "copy", paths[0], f"file {sub}", paths[1])


_AWK_STR = r'"((?:[^"\\]|\\.)*)"'


_AWK_EXPR = r'(?:"(?:[^"\\]|\\.)*"|[A-Za-z_]\w*)(?:\s+(?:"(?:[^"\\]|\\.)*"|[A-Za-z_]\w*))*'
"""An awk string expression: literals and variables joined by juxtaposition."""


def _awk_value(expr: str, names: dict[str, object]) -> object:
    """The value of an awk string expression: literals, and variables assigned only literals."""
    parts: list[str] = []
    for m in re.finditer(r'"((?:[^"\\]|\\.)*)"|([A-Za-z_]\w*)', expr):
        if m.group(1) is not None:
            parts.append(m.group(1).replace('\\"', '"'))
        else:
            value = names.get(m.group(2), NONLIT)
            if not isinstance(value, str) or not literal(value):
                return NONLIT
            parts.append(value)
    return "".join(parts) if parts else NONLIT


def awk_actions(program: str, fx: Effects) -> None:
    """awk `system()`, `print | "cmd"`, `"cmd" | getline`, `print > "file"`, `|&` and `/inet/`."""
    names: dict[str, object] = {}
    for m in re.finditer(r"(?<![=!<>\w$])([A-Za-z_]\w*)\s*=(?!=)([^;}\n]*)", program):
        rest = m.group(2).strip()
        only = re.fullmatch(r'"(?:[^"\\]|\\.)*"(?:\s*"(?:[^"\\]|\\.)*")*', rest)
        value = _awk_value(rest, {}) if only else NONLIT
        names[m.group(1)] = value if names.get(m.group(1), value) == value else NONLIT
    for m in re.finditer(r"system\s*\(\s*(" + _AWK_EXPR + r")\s*\)|system\s*\(", program):
        fx.shell(_awk_value(m.group(1), names) if m.group(1) else NONLIT, "system()")
    for m in re.finditer(r"\|\s*&?\s*(" + _AWK_EXPR + r")", program):
        if not m.group(1).startswith("getline"):
            value = _awk_value(m.group(1), names)
            if not (isinstance(value, str) and value.startswith("/inet")):
                fx.shell(value, "print |")
    for m in re.finditer(r"(?:^|[;{(]|\s)(" + _AWK_EXPR + r")\s*\|\s*&?\s*getline", program):
        value = _awk_value(m.group(1), names)
        if not (isinstance(value, str) and value.startswith("/inet")):
            fx.shell(value, "getline")
    for m in re.finditer(r"(?:print|printf)[^;>|}]*>>?\s*" + _AWK_STR, program):
        fx.path("write", m.group(1), "print >")
    if "/inet/" in program:
        if "|&" in program:
            fx.rule("SHELL-004", "awk /inet/ coprocess socket")
        else:
            fx.rule("CODE-002", "awk opens a network socket")
