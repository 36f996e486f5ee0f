"""Which arguments of a program are write, delete, move or chmod targets.

Parts:
    write_targets: Inv -> list of (raw path, verb) for rm, rmdir, unlink,
        shred, mv, cp, install, ln, rsync-free copies, chmod/chown/chgrp,
        truncate, touch, mkdir, tee, dd of=, sed -i / perl -i, find -delete,
        curl -o / wget -O downloads.

Verbs feed the path policy (`paths.judge_write`); `rdelete` is a recursive,
forced delete, the only kind that may remove a whole tree unasked.
"""

from __future__ import annotations

from guardian.paths import Verb
from guardian.rules import Inv

_FIND_FILTERS = frozenset({
    "-name", "-iname", "-path", "-ipath", "-regex", "-iregex", "-type", "-newer", "-mtime",
    "-mmin", "-atime", "-size", "-user", "-group", "-perm", "-empty", "-wholename", "-links",
    "-inum", "-samefile", "-ctime", "-cmin", "-amin", "-lname", "-iwholename",
})
_CHMODS = frozenset({"chmod", "chown", "chgrp", "setfacl", "chattr"})


def _rm(inv: Inv) -> list[tuple[str, Verb]]:
    recursive = inv.has("r", "R", "--recursive")
    force = inv.has("f", "--force")
    verb: Verb = "rdelete" if recursive and force else "delete"
    return [(p, verb) for p in inv.positional]


def _last_is_dest(inv: Inv, verb: Verb) -> list[tuple[str, Verb]]:
    args = inv.args
    for i, a in enumerate(args):
        if a in ("-t", "--target-directory") and i + 1 < len(args):
            return [(args[i + 1], verb)]
        if a.startswith("--target-directory="):
            return [(a.split("=", 1)[1], verb)]
    pos = inv.positional
    if inv.prog == "ln" and len(pos) == 1:
        return [(".", "write")]
    return [(pos[-1], verb)] if len(pos) >= 2 else []


def _chmod(inv: Inv) -> list[tuple[str, Verb]]:
    pos = inv.positional
    if inv.prog == "chattr":
        pos = [a for a in inv.args if not a.startswith(("-", "+", "="))]
        return [(p, "chmod") for p in pos]
    if any(a.startswith("--reference") for a in inv.args):
        return [(p, "chmod") for p in pos]
    mode_like = [a for a in inv.args if a.startswith("-") and len(a) > 1 and a[1] in "rwxXstugo"
                 and inv.prog == "chmod"]
    if mode_like:
        return [(p, "chmod") for p in pos]
    return [(p, "chmod") for p in pos[1:]]


def _find(inv: Inv) -> list[tuple[str, Verb]]:
    outside, skipping = [], False
    for a in inv.args:
        if a in ("-exec", "-execdir", "-ok", "-okdir"):
            skipping = True
        elif skipping and a in (";", "+", "\\;"):
            skipping = False
        elif not skipping:
            outside.append(a)
    if "-delete" not in outside:
        return []
    roots = []
    for a in inv.args:
        if a.startswith("-") or a in ("(", "!"):
            break
        roots.append(a)
    filtered = any(a in _FIND_FILTERS for a in inv.args)
    return [(r, "delete" if filtered else "rdelete") for r in roots or ["."]]


def _sed(inv: Inv) -> list[tuple[str, Verb]]:
    if not any(a.startswith("-i") or a.startswith("--in-place") for a in inv.args):
        return []
    pos = inv.positional
    scripted = any(a in ("-e", "-f", "--expression", "--file") for a in inv.args)
    return [(p, "write") for p in (pos if scripted else pos[1:])]


def _dd(inv: Inv) -> list[tuple[str, Verb]]:
    return [(a[3:], "write") for a in inv.args if a.startswith("of=")]


def _truncate(inv: Inv) -> list[tuple[str, Verb]]:
    out, skip = [], False
    for a in inv.args:
        if skip:
            skip = False
        elif a in ("-s", "-r", "--size", "--reference"):
            skip = True
        elif not a.startswith("-"):
            out.append((a, "truncate"))
    return out


def _plain(verb: Verb):  # type: ignore[no-untyped-def]
    def fn(inv: Inv) -> list[tuple[str, Verb]]:
        return [(p, verb) for p in inv.positional]

    return fn


def _download(inv: Inv) -> list[tuple[str, Verb]]:
    opts = ("-o", "--output") if inv.prog == "curl" else ("-O", "--output-document", "-P",
                                                          "--directory-prefix")
    out: list[tuple[str, Verb]] = []
    for i, a in enumerate(inv.args):
        if a in opts and i + 1 < len(inv.args):
            out.append((inv.args[i + 1], "write"))
        elif a.startswith(tuple(o + "=" for o in opts if o.startswith("--"))):
            out.append((a.split("=", 1)[1], "write"))
    return out


_TABLE = {
    "rm": _rm, "unlink": _plain("delete"), "rmdir": _plain("delete"), "shred": _plain("delete"),
    "mv": lambda inv: [(p, "move") for p in inv.positional] if len(inv.positional) >= 2 else [],
    "cp": lambda inv: _last_is_dest(inv, "write"), "install": lambda inv: _last_is_dest(inv, "write"),
    "ln": lambda inv: _last_is_dest(inv, "write"), "truncate": _truncate, "touch": _plain("write"),
    "mkdir": _plain("write"), "tee": _plain("write"), "dd": _dd, "sed": _sed, "find": _find,
    "perl": _sed, "srm": _plain("delete"), "wipe": _plain("delete"), "curl": _download,
    "wget": _download,
}


def write_targets(inv: Inv) -> list[tuple[str, Verb]]:
    """(raw target, verb) for every path `inv` would write, delete or chmod."""
    if inv.prog in _CHMODS:
        return _chmod(inv)
    fn = _TABLE.get(inv.prog)
    if fn is None:
        return []
    return [(p, v) for p, v in fn(inv) if p and p != "-"]
