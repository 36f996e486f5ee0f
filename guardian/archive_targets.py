"""Archivers and compressors that delete their inputs: those inputs as delete targets.

Parts:
    deletes: Inv -> list of (raw path, verb) for `tar --remove-files`, `zip -m`,
        `7z a -sdel`, `rar m`/`rar a -df`, gzip/bzip2/xz/lzma/lzip/compress
        (which replace their inputs unless `-k`/`-c`), zstd/lz4/lzop/brotli
        `--rm`, and the sources of `rsync --remove-source-files`.
    PROGRAMS: the program names it knows.

The verbs feed the ordinary path policy (`paths.judge_write`): inside the
workspace or scratch this is fine, the home folder or a system folder is
refused, anywhere else asks, exactly as `rm` of the same paths would be.
"""

from __future__ import annotations

import re

from tether.guardian.paths import Verb
from tether.guardian.rules import Inv
from tether.guardian.words import UNKNOWN

_REPLACE_BY_DEFAULT = frozenset({"gzip", "gunzip", "pigz", "unpigz", "bzip2", "bunzip2", "pbzip2", "xz",
                                 "unxz", "lzma", "unlzma", "lzip", "plzip", "compress", "uncompress", "pixz"})
_KEEP_BY_DEFAULT = frozenset({"zstd", "unzstd", "pzstd", "lz4", "lzop", "brotli"})
_ZIP_VALUED = frozenset({"-b", "-n", "-t", "-tt", "-P", "-Z", "-s", "-O", "--out", "--password", "-sp"})
_TAR_VALUED = frozenset({"-f", "--file", "-C", "--directory", "-T", "--files-from", "-X", "--exclude-from",
                         "-b", "-I", "--use-compress-program", "-H", "--format", "-g", "-V", "-K"})


def _recursive(inv: Inv) -> bool:
    return inv.has("r", "R", "--recursive")


def _compressor(inv: Inv) -> list[tuple[str, Verb]]:
    prog = inv.prog
    if inv.has("k", "c", "l", "t", "--keep", "--stdout", "--to-stdout", "--list", "--test", "--help", "h"):
        return []
    if prog in _KEEP_BY_DEFAULT and not ("--rm" in inv.long or (prog == "lzop" and inv.has("U", "--delete"))
                                         or (prog == "brotli" and inv.has("j"))):
        return []
    verb: Verb = "rdelete" if _recursive(inv) else "delete"
    # the data stays, compressed, beside it: an input unknown until run time is not a question
    return [(p, verb) for p in inv.positional if p != "-" and UNKNOWN not in p]


def _tar(inv: Inv) -> list[tuple[str, Verb]]:
    if "--remove-files" not in inv.long:
        return []
    args, files, cdir, i = inv.args, [], "", 0
    first_cluster = bool(args) and not args[0].startswith("-") and re.fullmatch(r"[A-Za-z]+", args[0])
    pending = list(args[0]) if first_cluster else []
    if first_cluster:
        i = 1
    while i < len(args):
        a = args[i]
        if pending and "f" in pending:  # `tar czf ARCHIVE`: the f of the first cluster takes it
            pending = []
            i += 1
            continue
        if a in ("-C", "--directory") and i + 1 < len(args):
            cdir = args[i + 1].rstrip("/") + "/"
            i += 2
            continue
        if a in _TAR_VALUED or (a.startswith("-") and not a.startswith("--") and a.endswith("f") and len(a) > 2):
            i += 2
            continue
        if not a.startswith("-"):
            files.append(a if a.startswith("/") or not cdir else cdir + a)
        i += 1
    if any(a in ("-T", "--files-from") or a.startswith("--files-from=") for a in args):
        files.append(UNKNOWN)  # the names come from a list the guardian cannot read
    return [(p, "rdelete") for p in files]


def _zip(inv: Inv) -> list[tuple[str, Verb]]:
    if not ("--move" in inv.long or inv.has("m")):
        return []
    args, pos, i, patterns = inv.args, [], 0, False
    while i < len(args):
        a = args[i]
        if a in _ZIP_VALUED:
            i += 2
            continue
        if a in ("-x", "-i", "--exclude", "--include"):
            patterns = True
        elif a.startswith("-"):
            patterns = False
        elif not patterns:
            pos.append(a)
        i += 1
    verb: Verb = "rdelete" if _recursive(inv) else "delete"
    return [(p, verb) for p in pos[1:]]


def _seven(inv: Inv) -> list[tuple[str, Verb]]:
    pos = [a for a in inv.args if not a.startswith("-")]
    if pos[:1] == ["a"] and any(a == "-sdel" for a in inv.args):
        return [(p, "rdelete") for p in pos[2:]]
    return []


def _rar(inv: Inv) -> list[tuple[str, Verb]]:
    pos = [a for a in inv.args if not a.startswith("-")]
    if pos[:1] in (["m"], ["mf"]) or (pos[:1] == ["a"] and any(a in ("-df", "-dr") for a in inv.args)):
        return [(p, "delete" if pos[0] == "mf" else "rdelete") for p in pos[2:]]
    return []


def _rsync(inv: Inv) -> list[tuple[str, Verb]]:
    if "--remove-source-files" not in inv.long or inv.has("n", "--dry-run"):
        return []
    from tether.guardian.file_operands import rsync_operands

    pos = rsync_operands(inv)[0]
    local = [p for p in pos[:-1] if not re.match(r"^(?:[\w.-]+@)?[\w.-]+:|^\w+://", p)]
    verb: Verb = "rdelete" if inv.has("r", "a", "--recursive", "--archive") else "delete"
    return [(p, verb) for p in local]


_TABLE = {"tar": _tar, "gtar": _tar, "bsdtar": _tar, "zip": _zip, "7z": _seven, "7za": _seven, "7zr": _seven,
          "rar": _rar, "rsync": _rsync, **{p: _compressor for p in _REPLACE_BY_DEFAULT | _KEEP_BY_DEFAULT}}
PROGRAMS: frozenset[str] = frozenset(_TABLE)


def deletes(inv: Inv) -> list[tuple[str, Verb]]:
    """(raw path, verb) for every input `inv` deletes after archiving or compressing it."""
    fn = _TABLE.get(inv.prog)
    return fn(inv) if fn is not None else []
