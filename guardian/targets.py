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

import re

from tether.guardian import archive_targets, local_databases
from tether.guardian.file_operands import MKFS, image_operands, rsync_operands
from tether.guardian.paths import Verb
from tether.guardian.rules import Inv

_FIND_FILTERS = frozenset({
    "-name", "-iname", "-path", "-ipath", "-regex", "-iregex", "-type", "-newer", "-mtime",
    "-mmin", "-atime", "-size", "-user", "-group", "-perm", "-empty", "-wholename", "-links",
    "-inum", "-samefile", "-ctime", "-cmin", "-amin", "-lname", "-iwholename",
})
_CHMODS = frozenset({"chmod", "chown", "chgrp", "setfacl", "chattr"})


def _rm(inv: Inv) -> list[tuple[str, Verb]]:
    # without a terminal, rm -r prompts for nothing: recursive is as destructive as recursive and forced
    verb: Verb = "rdelete" if inv.has("r", "R", "--recursive") else "delete"
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


def _mv(inv: Inv) -> list[tuple[str, Verb]]:
    """mv: every source is moved away; the destination (`-t DIR` or the last operand) is written."""
    pos = inv.positional
    dest = _last_is_dest(inv, "write")
    if any(a in ("-t", "--target-directory") or a.startswith("--target-directory=") for a in inv.args):
        return [(p, "move") for p in pos if (p, "write") not in dest] + dest
    return [(p, "move") for p in pos[:-1]] + dest if len(pos) >= 2 else []


_KEEPS_ACCESS = re.compile(r"^[0-7]?[67][0-7][014-5]$")
"""Octal modes that keep the owner's read and write and give others no write (755, 644, 0750)."""


def _mild_mode(mode: str) -> bool:
    """A mode that neither locks the owner out nor makes files world-writable (`a+rX`, `u+rw`, `go-w`,
    `755`): the project's own modes, fine on the workspace itself (`paths.judge_write`'s `modes`)."""
    if _KEEPS_ACCESS.match(mode):
        return True
    for clause in mode.split(","):
        m = re.match(r"^([ugoa]*)([-+=])([rwxXst]*)$", clause)
        if not m:
            return False
        who, op, perms = m.group(1) or "a", m.group(2), m.group(3)
        if op in "-=" and ("u" in who or "a" in who) and (op == "-" and set(perms) & {"r", "w"}
                                                          or op == "=" and not {"r", "w"} <= set(perms)):
            return False
        if op in "+=" and "w" in perms and ("o" in who or "a" in who):
            return False
    return True


def _chmod(inv: Inv) -> list[tuple[str, Verb]]:
    mild = inv.prog in ("chown", "chgrp") or (inv.prog == "chmod" and inv.positional[:1] != [] and
                                               _mild_mode(inv.positional[0]) and not any(
                                                   a.startswith("--reference") for a in inv.args))
    verb: Verb = "modes" if mild else "chmod"
    return [(p, verb if v == "chmod" else v) for p, v in _chmod_targets(inv)]


def _chmod_targets(inv: Inv) -> list[tuple[str, Verb]]:
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
    args = inv.args
    narrowing = {a for a in args if a in _FIND_FILTERS}
    types = {args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-type", "-xtype")}
    # `-type f` alone selects every file (a wipe); `-type d` alone only empty folders go
    filtered = bool(narrowing - {"-type", "-xtype"}) or (bool(narrowing) and types <= {"d"})
    return [(r, "delete" if filtered else "rdelete") for r in roots or ["."]]


_FIND_WRITES = ("-fprintf", "-fprint", "-fprint0", "-fls")


def _find_writes(inv: Inv) -> list[tuple[str, Verb]]:
    """`find -fprintf FILE FMT` and friends write FILE (also inside `-exec`-free parts)."""
    args = inv.args
    return [(args[i + 1], "write") for i, a in enumerate(args[:-1]) if a in _FIND_WRITES]


def _perl(inv: Inv) -> list[tuple[str, Verb]]:
    """`perl -pi -e CODE FILE...`: in-place edits of the files after the code."""
    args = inv.args
    if not any(a.startswith("-") and not a.startswith("--") and "i" in a[1:].split("e")[0]
               for a in args):
        return []
    out, i, code_seen = [], 0, False
    while i < len(args):
        a = args[i]
        if a in ("-e", "-E") or (a.startswith("-") and a.rstrip("E").endswith("e") and len(a) > 1
                                 and not a.startswith("--")):
            i += 2
            code_seen = True
            continue
        if not a.startswith("-"):
            if code_seen:
                out.append((a, "write"))
            code_seen = True
        i += 1
    return out


def _awk(inv: Inv) -> list[tuple[str, Verb]]:
    """`print > "file"` / `>> "file"` inside an awk program given on the command line; gawk's
    `-i inplace` (`--include=inplace`) rewrites every input file."""
    args, i, inplace = inv.args, 0, False
    while i < len(args) and args[i].startswith("-"):
        a = args[i]
        if a in ("-f", "--file"):
            return []
        if a in ("-i", "--include", "-l", "--load"):
            inplace = inplace or (i + 1 < len(args) and args[i + 1].startswith("inplace"))
        elif a.startswith(("-iinplace", "--include=inplace", "-linplace", "--load=inplace")):
            inplace = True
        i += 2 if a in ("-F", "-v", "-i", "--include", "-l", "--load", "--assign", "--field-separator") else 1
    if i >= len(args):
        return []
    out = [(m.group(1), "write") for m in re.finditer(r">>?\s*\"([^\"]+)\"", args[i])]
    if inplace:
        out += [(a, "write") for a in args[i + 1:] if "=" not in a]
    return out


def _valued(opts: tuple[str, ...], verb: Verb = "write"):  # type: ignore[no-untyped-def]
    def fn(inv: Inv) -> list[tuple[str, Verb]]:
        args = inv.args
        out = [(args[i + 1], verb) for i, a in enumerate(args[:-1]) if a in opts]
        out += [(a.split("=", 1)[1], verb) for a in args
                if "=" in a and a.split("=", 1)[0] in opts and a.startswith("--")]
        out += [(a[2:], verb) for a in args if len(a) > 2 and not a.startswith("--")
                and a[:2] in opts]
        return out

    return fn


def _patch(inv: Inv) -> list[tuple[str, Verb]]:
    """`patch FILE < diff` edits FILE; `-o OUT` writes OUT instead."""
    out = _valued(("-o", "--output"))(inv)
    if out:
        return out
    pos = [a for a in _operands(inv, {"-p", "-i", "-d", "-D", "-F", "-r", "-V", "-B", "-Y", "-z", "-g"}) if a != "-"]
    return [(pos[0], "write")] if pos else []


def _keygen(inv: Inv) -> list[tuple[str, Verb]]:
    """`ssh-keygen -f FILE` writes FILE (and FILE.pub) when generating a key."""
    if inv.has("l", "y", "e", "i", "F", "H", "r", "B", "L", "Q", "D", "K", "k"):
        return []
    return _valued(("-f",))(inv)


SENSITIVE_ONLY: dict = {}
"""Programs whose destination is judged only against the sensitive-path rules (filled below)."""


def _copy_dest(inv: Inv) -> list[tuple[str, Verb]]:
    """rsync/scp: the last operand, when it is local."""
    pos = rsync_operands(inv)[0] if inv.prog == "rsync" else inv.positional
    if len(pos) < 2 or re.match(r"^(?:[\w.-]+@)?[\w.-]+:|^\w+://", pos[-1]):
        return []
    return [(pos[-1], "write")]


def _tar(inv: Inv) -> list[tuple[str, Verb]]:
    """tar/bsdtar extracting into `-C DIR` / `--directory=DIR`, else into the working folder;
    `-P`/`--absolute-names` writes each member at its own absolute path (`/` stands for them)."""
    first = inv.args[0] if inv.args else ""
    cluster = first if not first.startswith("-") else ""
    extracting = inv.has("x", "--extract", "--get") or "x" in cluster
    if not extracting:
        return []
    if inv.has("P", "--absolute-names") or "P" in cluster:
        return [("/", "write")]
    return _valued(("-C", "--directory", "--cd"))(inv) or [(".", "write")]


def _cmake(inv: Inv) -> list[tuple[str, Verb]]:
    """`cmake -E rm -r`, `remove_directory`, `remove`: cmake's portable rm."""
    pos = [a for a in inv.args if a != "-E"] if inv.args[:1] == ["-E"] else []
    if not pos:
        return []
    verb, rest = pos[0], [a for a in pos[1:] if not a.startswith("-")]
    if verb == "rm":
        return [(p, "rdelete" if any(a.startswith("-") and "r" in a.lower() for a in pos[1:]) else "delete")
                for p in rest]
    if verb in ("remove_directory", "rm_rf"):
        return [(p, "rdelete") for p in rest]
    return [(p, "delete") for p in rest] if verb == "remove" else []


def _extract_dir(opts: tuple[str, ...]):  # type: ignore[no-untyped-def]
    """Extractors whose destination is an option, else the working folder (7z x, cpio -i, python -m zipfile -e)."""
    def fn(inv: Inv) -> list[tuple[str, Verb]]:
        return _valued(opts)(inv) or [(".", "write")]

    return fn


def _seven_zip(inv: Inv) -> list[tuple[str, Verb]]:
    return _extract_dir(("-o",))(inv) if inv.positional[:1] in (["x"], ["e"]) else []


def _zipfile(inv: Inv) -> list[tuple[str, Verb]]:
    """`python -m zipfile -e ARCHIVE DEST` (and tarfile's)."""
    args = inv.args
    for i, a in enumerate(args):
        if a in ("-e", "--extract"):
            return [(args[i + 2], "write")] if i + 2 < len(args) else [(".", "write")]
    return []


def _cpio(inv: Inv) -> list[tuple[str, Verb]]:
    extracting = inv.has("i", "--extract")
    return _extract_dir(("-D", "--directory"))(inv) if extracting else []


def _unzip(inv: Inv) -> list[tuple[str, Verb]]:
    if inv.has("l", "t", "p", "Z", "v"):
        return []
    return _extract_dir(("-d",))(inv)


def _editor(inv: Inv) -> list[tuple[str, Verb]]:
    """ed/ex/vim given commands that write (`w`, `wq`, `x`, `:w!`): the files they edit."""
    text = " ".join(a for a in inv.args) + "\n" + (inv.simple.stdin or "")
    if not re.search(r"(?:^|[\n|:;\s])(?:w|wq|x|wq!|w!|write|update|saveas|sav)(?:\s|$|!|\|)", text):
        return []
    return [(p, "write") for p in inv.positional if not p.startswith(("+", ":"))
            and " " not in p]


_SED_VALUED = frozenset({"-e", "-f", "--expression", "--file", "-l", "--line-length"})


def _sed(inv: Inv) -> list[tuple[str, Verb]]:
    """`sed -i`: the files it edits; `-e SCRIPT`/`-f FILE` values are not among them."""
    if not any(a.startswith(("-i", "--in-place")) or (a.startswith("-") and not a.startswith("--")
                                                        and "i" in a[1:].split("e")[0].split("f")[0])
               for a in inv.args):
        return []
    files, scripted, skip, rest = [], False, False, False
    for a in inv.args:
        if skip:
            skip = False
        elif rest or not a.startswith("-") or a == "-":
            files.append(a)
        elif a == "--":
            rest = True
        elif a in _SED_VALUED:
            skip, scripted = True, scripted or a in ("-e", "-f", "--expression", "--file")
        elif a.startswith(("--expression=", "--file=")):
            scripted = True
        elif not a.startswith("--") and a[-1] in "ef" and a[1:-1].isalpha():
            skip, scripted = True, True  # -ne SCRIPT, -Ee SCRIPT, -nf FILE
    return [(p, "write") for p in (files if scripted else files[1:])]


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


def _touch(inv: Inv) -> list[tuple[str, Verb]]:
    """touch creates or stamps; `-r FILE`/`-d DATE`/`-t STAMP` take a value."""
    out, skip = [], False
    for a in inv.args:
        if skip:
            skip = False
        elif a in ("-r", "-d", "-t", "--reference", "--date"):
            skip = True
        elif not a.startswith("-") or a == "-":
            out.append((a, "create"))
    return out


def _tee(inv: Inv) -> list[tuple[str, Verb]]:
    verb: Verb = "append" if inv.has("a", "--append") else "write"
    return [(p, verb) for p in inv.positional]


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


def _git(inv: Inv) -> list[tuple[str, Verb]]:
    """`git clean -f`: its pathspecs (or the cwd) go through the path policy as deletes."""
    from tether.guardian.rules_git import clean_targets, git_sub

    sub, args = git_sub(inv)
    if sub != "clean" or not any(a == "--force" or (a.startswith("-") and not a.startswith("--") and "f" in a)
                                 for a in args):
        return []
    out: list[tuple[str, Verb]] = []
    for p in clean_targets(inv):
        head, _, last = p.rpartition("/")
        whole = last == "." or (any(c in last for c in "*?") and not last.strip("*?."))  # `.`, `*`: its entries
        out.append(((head or ".") if whole and last != "." else p, "delete" if whole else "rdelete"))
    return out


_PS_VALUED = frozenset({"-include", "-exclude", "-filter", "-credential", "-stream"})


def _ps_remove(inv: Inv) -> list[tuple[str, Verb]]:
    """PowerShell's `Remove-Item [-Path] P -Recurse -Force` (`pwsh -c ...`; options are case-insensitive)."""
    args, out = inv.args, []
    recursive = any(a.lower() in ("-r", "-rec", "-recurse") or a.lower().startswith("-recu") for a in args)
    skip = False
    for a in args:
        low = a.lower()
        if skip:
            skip = False
        elif low in _PS_VALUED:
            skip = True
        elif not a.startswith("-"):
            out.append((a.rstrip(",;"), "rdelete" if recursive else "delete"))
    return out


# fmt: off
OUTPUTS: dict[str, dict] = {
    # DATA: programs that write a file named by an option or an operand, judged as a write like tee's.
    # opts: options whose value is the output; at: that operand (-1: the last); from: every operand from
    # there on (in-place editors); valued: options taking a value (so operands are counted right);
    # when: only with one of these options (`dpkg-deb -x`, `gofmt -w`); sub: only after this first word.
    "uniq": {"at": 1, "valued": "-f -s -w --skip-fields --skip-chars --check-chars"},
    "xxd": {"at": 1, "valued": "-c -g -l -s -o -n -C -cols -len -seek -groupsize -name -octets"},
    "sponge": {"at": 0}, "lz4": {"at": 1}, "qpdf": {"at": 1}, "ps2pdf": {"at": 1}, "pdf2ps": {"at": 1},
    "lame": {"at": 1}, "objcopy": {"at": 1}, "sox": {"at": -1}, "wkhtmltopdf": {"at": -1},
    "split": {"at": 1, "valued": "-a -b -C -l -n -t --additional-suffix --filter --suffix-length --bytes "
                                "--line-bytes --lines --number --separator"},
    "csplit": {"opts": "-f --prefix"},
    "sdiff": {"opts": "-o --output"}, "pandoc": {"opts": "-o --output"}, "shuf": {"opts": "-o --output"},
    "gcc": {"opts": "-o"}, "cc": {"opts": "-o"}, "g++": {"opts": "-o"}, "c++": {"opts": "-o"},
    "clang": {"opts": "-o"}, "clang++": {"opts": "-o"}, "tcc": {"opts": "-o"}, "ld": {"opts": "-o"},
    "as": {"opts": "-o"}, "strip": {"opts": "-o"}, "rustc": {"opts": "-o --out-dir"},
    "go": {"sub": "build", "opts": "-o"}, "zstd": {"opts": "-o"}, "brotli": {"opts": "-o --output"},
    "msgfmt": {"opts": "-o --output-file"}, "pg_dump": {"opts": "-f --file"},
    "mysqldump": {"opts": "-r --result-file"}, "yt-dlp": {"opts": "-o --output"}, "cwebp": {"opts": "-o"},
    "rsvg-convert": {"opts": "-o --output"}, "inkscape": {"opts": "-o --export-filename"},
    "xmllint": {"opts": "--output -o"},
    "script": {"at": 0, "valued": "-c --command -I -O -T -B -E --log-in --log-out --log-timing --log-io --echo"},
    "ffmpeg": {"at": -1}, "avconv": {"at": -1}, "convert": {"at": -1}, "magick": {"at": -1},
    "mogrify": {"from": 0, "valued": "-resize -quality -format -path -strip -rotate -crop -density"},
    "sd": {"from": 2}, "yq": {"when": "-i --inplace", "from": 1},
    "gofmt": {"when": "-w", "from": 0}, "goimports": {"when": "-w", "from": 0},
    "clang-format": {"when": "-i", "from": 0}, "prettier": {"when": "--write -w", "from": 0},
    "dpkg-deb": {"when": "-x -X -R -b -e --extract --vextract --raw-extract --build --control", "at": 1},
}
# fmt: on


def _operands(inv: Inv, valued: set[str]) -> list[str]:
    out, skip = [], False
    for a in inv.args:
        if skip:
            skip = False
        elif a in valued:
            skip = True
        elif not a.startswith("-") or a == "-":
            out.append(a)
    return out


def _output(inv: Inv) -> list[tuple[str, Verb]]:
    """The file an `OUTPUTS` program writes (`uniq IN OUT`, `gcc -o OUT`, `ffmpeg ... OUT`, `sponge FILE`)."""
    e = OUTPUTS[inv.prog]
    if e.get("sub") and inv.positional[:1] != [e["sub"]]:
        return []
    if e.get("when") and not any(inv.has(o[1:] if len(o) == 2 else o) for o in e["when"].split()):
        return []
    out = _valued(tuple(e["opts"].split()))(inv) if e.get("opts") else []
    valued = set(e.get("valued", "").split()) | set(e.get("opts", "").split())
    ops = _operands(inv, valued)
    if e.get("sub"):
        ops = ops[1:]
    if "at" in e and ops and (e["at"] == -1 or e["at"] < len(ops)):
        out.append((ops[e["at"]], "write"))
    if "from" in e:
        out += [(p, "write") for p in ops[e["from"]:]]
    return out


_REMOTE = re.compile(r"^(?:[\w.-]+@)?[\w.-]+:|^\w+://")


def _dedupe(inv: Inv) -> list[tuple[str, Verb]]:
    """fdupes/jdupes `-d` (`--delete`): duplicates under each folder go, `-r` through the whole tree."""
    if not (inv.has("d", "--delete") or any(a.startswith("--delete") for a in inv.args)):
        return []
    verb: Verb = "rdelete" if inv.has("r", "R", "--recurse", "--recursive") else "delete"
    return [(p, verb) for p in _operands(inv, {"-x", "--xsize", "-o", "--order", "-X", "--ext-filter",
                                               "-C", "--chunk-size", "-l", "--log"})]


def _rdfind(inv: Inv) -> list[tuple[str, Verb]]:
    """rdfind: every option takes a value; `-deleteduplicates true` deletes under the folders that follow."""
    args, dirs, deleting, i = inv.args, [], False, 0
    while i < len(args):
        if args[i].startswith("-"):
            deleting = deleting or (args[i] == "-deleteduplicates" and args[i + 1:i + 2] == ["true"])
            i += 2
        else:
            dirs.append(args[i])
            i += 1
    return [(d, "rdelete") for d in dirs] if deleting else []


def _gio(inv: Inv) -> list[tuple[str, Verb]]:
    """`gio trash` / `gio remove` (the desktop's rm; a trashed folder goes whole)."""
    pos = inv.positional
    if pos[:1] == ["trash"]:
        return [(p, "rdelete") for p in pos[1:]]
    return [(p, "delete") for p in pos[1:]] if pos[:1] in (["remove"], ["rm"]) else []


def _sync_delete(inv: Inv) -> list[tuple[str, Verb]]:
    """rsync `--delete*` and rclone `sync`: a local destination loses what the source lacks (a wipe when
    the source is empty); `rclone delete/purge` of a local path deletes it."""
    pos = inv.positional
    if inv.prog == "rclone":
        if pos[:1] in (["delete"], ["purge"], ["deletefile"]):
            return [(p, "rdelete") for p in pos[1:] if not _REMOTE.match(p)]
        if pos[:1] == ["sync"] and len(pos) >= 3 and not _REMOTE.match(pos[2]):
            return [(pos[2], "rdelete")]
        return []
    if not any(a.startswith("--delete") for a in inv.args) or len(pos) < 2 or _REMOTE.match(pos[-1]):
        return []
    return [(pos[-1], "rdelete")]


_UNISON_VALUED = frozenset({"-force", "-prefer", "-path", "-ignore", "-ignorenot", "-root", "-logfile",
                            "-backup", "-backupdir", "-ui", "-sshargs", "-servercmd", "-forcepartial",
                            "-preferpartial", "-merge", "-repeat", "-retry", "-label"})


def _unison(inv: Inv) -> list[tuple[str, Verb]]:
    """unison `-force ROOT` / `-prefer ROOT`: the other replica is made like ROOT (emptied by an empty one)."""
    args, roots, forced = inv.args, [], set()
    for i, a in enumerate(args):
        if a in _UNISON_VALUED and i + 1 < len(args):
            if a in ("-force", "-prefer"):
                forced.add(args[i + 1])
            elif a == "-root":
                roots.append(args[i + 1])
        elif not a.startswith("-") and (i == 0 or args[i - 1] not in _UNISON_VALUED):
            roots.append(a)
    if not forced or "newer" in forced or "older" in forced:
        return []
    return [(r, "rdelete") for r in roots if r not in forced and not _REMOTE.match(r)]


_TABLE = {
    "rm": _rm, "Remove-Item": _ps_remove, "remove-item": _ps_remove, "ri": _ps_remove,
    "unlink": _plain("delete"), "rmdir": _plain("delete"), "shred": _plain("delete"),
    "mv": _mv,
    "cp": lambda inv: _last_is_dest(inv, "write"), "install": lambda inv: _last_is_dest(inv, "write"),
    "ln": lambda inv: _last_is_dest(inv, "write"), "truncate": _truncate, "touch": _touch,
    "mkdir": _plain("create"), "tee": _tee, "dd": _dd, "sed": _sed, "find": _find,
    "perl": _perl, "srm": _plain("delete"), "wipe": _plain("delete"), "curl": _download,
    "wget": _download, "awk": _awk, "gawk": _awk, "mawk": _awk, "nawk": _awk,
    "ssh-keygen": _keygen, "sort": _valued(("-o", "--output")),
    "gpg": _valued(("-o", "--output")), "openssl": _valued(("-out",)),
    "iconv": _valued(("-o", "--output")),
    "rimraf": _plain("rdelete"), "del-cli": _plain("rdelete"), "del": _plain("rdelete"),
    "trash": _plain("rdelete"), "trash-put": _plain("rdelete"), "cmake": _cmake,
    "shx": lambda inv: _rm(Inv(inv.argv[1:], inv.simple)) if inv.args[:1] == ["rm"] else [],
    "ed": _editor, "ex": _editor, "vim": _editor, "vi": _editor, "nvim": _editor,
    "uudecode": _valued(("-o", "--output-file")), "patch": _patch, "git": _git,
    "fdupes": _dedupe, "jdupes": _dedupe, "rdfind": _rdfind, "gio": _gio, "gvfs-trash": _plain("rdelete"),
    "gvfs-rm": _plain("delete"), "rmtrash": _plain("rdelete"), "trash-rm": _plain("rdelete"),
    "rsync": _sync_delete, "rclone": _sync_delete, "unison": _unison,
}


def _clone_dest(inv: Inv) -> list[tuple[str, Verb]]:
    """`git clone URL DIR`: the directory it creates."""
    pos = inv.positional
    return [(pos[2], "write")] if pos[:1] == ["clone"] and len(pos) > 2 else []


SENSITIVE_ONLY.update({"rsync": _copy_dest, "scp": _copy_dest, "tar": _tar, "bsdtar": _tar, "gtar": _tar,
                       "unzip": _unzip, "7z": _seven_zip, "7za": _seven_zip, "7zz": _seven_zip, "cpio": _cpio,
                       "zipfile": _zipfile, "tarfile": _zipfile,
                       "git": _clone_dest})


def sensitive_targets(inv: Inv) -> list[str]:
    """Destinations (rsync, scp, tar -C, unzip -d, git clone) checked only against
    persistence and credential paths, not the write-depth policy."""
    fn = SENSITIVE_ONLY.get(inv.prog)
    return [p for p, _ in fn(inv)] if fn else []


def _database_file_wipe(inv: Inv) -> list[tuple[str, Verb]]:
    """`sqlite3 test.db 'DELETE FROM t'`: wiping SQL on a database file writes that file."""
    from tether.guardian.rules_cloud import SQL_DESTRUCTIVE

    path = local_databases.workspace_file_db(inv)
    texts = [*inv.args, *([inv.simple.stdin] if inv.simple.stdin else [])]
    return [(path, "write")] if path and any(SQL_DESTRUCTIVE.search(t) for t in texts) else []


def write_targets(inv: Inv) -> list[tuple[str, Verb]]:
    """(raw target, verb) for every path `inv` would write, delete or chmod."""
    if inv.prog in _CHMODS:
        return _chmod(inv)
    fn = _TABLE.get(inv.prog) or (_output if inv.prog in OUTPUTS else None)
    out = fn(inv) if fn is not None else []
    if inv.prog in archive_targets.PROGRAMS:
        out = out + archive_targets.deletes(inv)
    if inv.prog == "find":
        out = out + _find_writes(inv)
    if inv.prog in MKFS:
        out = out + [(p, "write") for p in image_operands(inv)]
    if inv.prog in local_databases.FILE_DBS:
        out = out + _database_file_wipe(inv)
    return [(p, v) for p, v in out if p and p != "-"]
