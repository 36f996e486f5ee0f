"""Decode what a pipeline stage would print, when that is knowable statically.

Parts:
    static_output: the stdout of a list of Simple commands (echo, printf, cat
        of a heredoc, and base64/base32/hex (`xxd -r -p`)/rev/printf-escape
        decoders applied to such output), or None when it cannot be known.
    printf_format: what `printf FMT ARGS` prints for the common directives.

This is how `echo cm0gLXJmIC8K | base64 -d | sh` is judged as `rm -rf /`: the
shell's stdin is decoded here and analysed like any other command line.
"""

from __future__ import annotations

import re

from tether.guardian.shell import Simple
from tether.guardian.words import UNKNOWN, ansi_c

_ENV_SETUP: dict[str, list[list[str]]] = {
    "ssh-agent": [["-s"], ["-c"], []], "pyenv": [["init"], ["virtualenv-init"]], "rbenv": [["init"]],
    "nodenv": [["init"]], "goenv": [["init"]], "jenv": [["init"]], "direnv": [["hook"]],
    "conda": [["shell.bash"], ["shell.zsh"]], "brew": [["shellenv"]], "starship": [["init"]],
    "zoxide": [["init"]], "opam": [["env"]], "fnm": [["env"]], "mise": [["activate"]],
    "dircolors": [["-b"], []], "keychain": [["--eval"]], "gpg-agent": [["--daemon"]],
}
"""Tools whose output is meant for `eval` and only sets up the environment (judged as empty)."""
_DIRECTIVE = re.compile(r"%([-+ #0]*\d*(?:\.\d+)?)([sbdqc%])")
_MAX = 100_000


def printf_format(fmt: str, args: list[str]) -> str:
    """Render `printf` output: escapes in the format, `%s`/`%b`/`%d` directives."""
    fmt = ansi_c(fmt)
    if "%" not in fmt:
        return fmt
    out, queue = [], list(args)
    while True:
        consumed = False

        def one(m: re.Match[str], q: list[str] = queue) -> str:
            nonlocal consumed
            kind = m.group(2)
            if kind == "%":
                return "%"
            consumed = True
            value = q.pop(0) if q else ""
            return ansi_c(value) if kind == "b" else value

        out.append(_DIRECTIVE.sub(one, fmt))
        if not queue or not consumed:
            return "".join(out)


def _echo(args: list[str]) -> str:
    newline, escapes = True, False
    while args and re.fullmatch(r"-[neE]+", args[0]):
        newline = newline and "n" not in args[0]
        escapes = "e" in args[0] or escapes
        args = args[1:]
    text = " ".join(args)
    return (ansi_c(text) if escapes else text) + ("\n" if newline else "")


def _b64(data: str, alphabet: str) -> str | None:
    import base64  # only for a line that decodes base64 (the start-up of `tether guard` skips it)
    import binascii

    compact = re.sub(r"\s+", "", data)
    try:
        if alphabet == "32":
            raw = base64.b32decode(compact + "=" * (-len(compact) % 8), casefold=True)
        else:
            raw = base64.b64decode(compact + "=" * (-len(compact) % 4), validate=False)
    except (binascii.Error, ValueError):
        return None
    return raw.decode("latin-1")


def _hex(data: str) -> str | None:
    compact = re.sub(r"[^0-9a-fA-F]", "", data)
    try:
        return bytes.fromhex(compact[: len(compact) // 2 * 2]).decode("latin-1")
    except ValueError:
        return None


def _path_tool(prog: str, args: list[str], s: Simple) -> str | None:
    """What `mktemp`, `dirname P`, `basename P` print (the random part of a
    mktemp name kept as its X's: it is a fresh name under the directory).

    `pwd` is not read here: `parse.Walker._at` gives `$(pwd)` the cwd the walker follows at that point of the line.
    """
    import posixpath

    if any(UNKNOWN in a for a in args):
        return None
    pos = [a for a in args if not a.startswith("-")]
    if prog in ("dirname", "basename"):
        if len(pos) != 1 or len(args) != 1:
            return None
        fn = posixpath.dirname if prog == "dirname" else posixpath.basename
        return (fn(pos[0].rstrip("/") or "/") or ".") + "\n"
    tmpdir, template, in_tmp = s.env.get("TMPDIR") or "/tmp", "tmp.XXXXXXXXXX", True
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-p", "--tmpdir") and i + 1 < len(args):
            tmpdir, i = args[i + 1], i + 1
        elif a.startswith("--tmpdir="):
            tmpdir = a.split("=", 1)[1]
        elif a.startswith("-p") and len(a) > 2:
            tmpdir = a[2:]
        elif a.startswith("--suffix="):
            template += a.split("=", 1)[1]
        elif not a.startswith("-"):
            template, in_tmp = a, "t" in "".join(x[1:] for x in args if x.startswith("-") and
                                                 not x.startswith("--")) or "--tmpdir" in " ".join(args)
        i += 1
    if "-p" in args or any(a.startswith(("-p", "--tmpdir")) for a in args):
        in_tmp = True
    if UNKNOWN in tmpdir or UNKNOWN in template or not template:
        return None
    return (posixpath.join(tmpdir, template) if in_tmp else template) + "\n"


def _tr_set(spec: str) -> str | None:
    spec = ansi_c(spec)
    if "[:" in spec or "[=" in spec or "*" in spec:
        return None
    out, i = [], 0
    while i < len(spec):
        if i + 2 < len(spec) and spec[i + 1] == "-" and ord(spec[i]) <= ord(spec[i + 2]):
            out.extend(chr(c) for c in range(ord(spec[i]), ord(spec[i + 2]) + 1))
            i += 3
        else:
            out.append(spec[i])
            i += 1
    return "".join(out)


def _tr(data: str, args: list[str]) -> str | None:
    """`tr SET1 SET2` and `tr -d SET` with plain characters and ranges (rot13 and the like)."""
    if args[:1] == ["-d"] and len(args) == 2:
        gone = _tr_set(args[1])
        return None if gone is None else "".join(c for c in data if c not in gone)
    if len(args) != 2 or any(a.startswith("-") for a in args):
        return None
    a, b = _tr_set(args[0]), _tr_set(args[1])
    if not a or not b:
        return None
    b = b + b[-1] * (len(a) - len(b))
    return data.translate(str.maketrans(a, b[: len(a)]))


def _stdin_of(s: Simple) -> str | None:
    if s.stdin is not None:
        return s.stdin + "\n"
    if s.upstream:
        return static_output(s.upstream)
    return None


def _one(s: Simple) -> str | None:
    if not s.argv:
        return ""
    prog, args = s.argv[0].rsplit("/", 1)[-1], s.argv[1:]
    if prog == "echo":
        return _echo(args)
    if prog == "printf":
        return printf_format(args[0], args[1:]) if args else ""
    if prog == "export" and all(a.startswith("-") for a in args):
        return None  # `export`, `export -p` print every exported variable
    if prog in ("true", ":", "cd", "export"):
        return ""
    if prog in ("mktemp", "dirname", "basename"):
        return _path_tool(prog, args, s)
    if prog in _ENV_SETUP and (args[:1] in _ENV_SETUP[prog] or (not args and [] in _ENV_SETUP[prog])):
        return ""  # `eval "$(pyenv init -)"`: environment set-up printed by a known tool
    if prog == "tr":
        text = _stdin_of(s)
        return None if text is None else _tr(text, args)
    data = _stdin_of(s) if not [a for a in args if not a.startswith("-")] else None
    if prog in ("cat", "tee"):
        return data
    if data is None:
        return None
    flags = "".join(a.lstrip("-") for a in args if a.startswith("-"))
    decoding = "d" in flags or "decode" in flags or "D" in flags
    if prog in ("base64", "gbase64") and decoding:
        return _b64(data, "64")
    if prog == "base32" and decoding:
        return _b64(data, "32")
    if prog == "openssl" and "base64" in args and "-d" in args:
        return _b64(data, "64")
    if prog == "xxd" and "r" in flags:
        return _hex(data)
    if prog == "rev":
        return "\n".join(line[::-1] for line in data.split("\n"))
    return None


def static_output(stage: list[Simple]) -> str | None:
    """What the stage prints, or None when any part of it is unknowable."""
    parts = []
    for s in stage:
        out = _one(s)
        if out is None or UNKNOWN in out or len(out) > _MAX:
            return None
        parts.append(out)
    return "".join(parts)
