"""Path resolution and the write-target policy (minimum depth, confinement).

Parts:
    normalise: a shell path -> absolute, `.`/`..` folded (never touches disk).
    Target: where a write lands (resolved path, glob prefix, or unknown).
    resolve: raw target text -> Target.
    judge_write: Target + verb -> the path-policy rule ids that apply, with
        their decisions (the rule table in `rules_paths` gives them reasons).

Nothing here reads the filesystem: the guardian judges text, so a symlink is
judged by its name. Scratch space (/tmp/x, /var/tmp/x) is exempt; the scratch
folders themselves are not.
"""

from __future__ import annotations

import posixpath
import re

from tether.common.record import dataclass
from tether.guardian.words import UNKNOWN

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from typing import Literal

    Verb = Literal["delete", "rdelete", "write", "create", "append", "move", "chmod", "modes", "truncate"]
else:
    Verb = str  # what the annotations name at run time (they are strings; nothing validates against it)
"""`create` (mkdir, touch) and `append` (`>>`, `tee -a`) destroy nothing already there:
they are `write` everywhere except on an unresolvable target (`harmless_unknown`). `modes` is a chmod that
keeps the owner's access and gives others no write, or a chown/chgrp (`targets._mild_mode`): `chmod`
everywhere except on the workspace itself."""
SCRATCH = ("/tmp", "/var/tmp")
SYSTEM = ("/etc", "/usr", "/bin", "/sbin", "/boot", "/lib", "/lib32", "/lib64", "/libx32",
          "/var", "/sys", "/proc", "/root", "/srv", "/opt", "/snap")
HARMLESS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero"})
_GLOB = frozenset("*?[")
NOT_WORKSPACES = frozenset({"/", "/etc", "/usr", "/bin", "/sbin", "/boot", "/lib", "/lib32",
                            "/lib64", "/libx32", "/var", "/sys", "/proc", "/dev", "/run", "/home",
                            "/Users"})
"""Workspaces whose inside is never exempt from the depth rule (a system folder is no project)."""
_ROOT_SAFE: frozenset[str] = frozenset({"write", "create", "append", "delete"})
"""Verbs that do not wipe the folder they name: `cp x .`, `mkdir -p .`, a filtered
`find . -name '*.pyc' -delete` (rm and rmdir refuse a folder without -r); not `rm -f *`."""
_CACHE_SAFE: frozenset[str] = frozenset({"create", "delete", "rdelete"})
"""Verbs that are harmless strictly inside `~/.cache` (`mkdir -p ~/.cache/tool`, `rm -rf ~/.cache/pip`): a cache
costs only a new download when cleared. Content written there is another matter (pip's built wheels, pre-commit's
hook environments, torch hub code are loaded later as trusted): overwrites, moves and chmod still ask."""
_ALL = re.compile(r"[*?.]|\[[^\]]*\]")
"""What a glob component that matches every entry is made of (`*`, `.*`, `?*`, `[!.]*`)."""


def normalise(path: str, cwd: str, home: str) -> str:
    """Absolute, normalised form of `path` seen from `cwd` (`~` is `home`)."""
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    if not path.startswith("/"):
        if UNKNOWN in cwd:
            return UNKNOWN + "/" + path
        path = cwd.rstrip("/") + "/" + path
    norm = posixpath.normpath(path)
    return "/" + norm.lstrip("/")


def depth(path: str) -> int:
    """Number of components: `/` has 0, `/etc` 1, `/home/user` 2."""
    return len([p for p in path.split("/") if p])


def under(path: str, root: str) -> bool:
    """Whether `path` is `root` or inside it."""
    root = root.rstrip("/") or "/"
    return path == root or path.startswith(root + "/") or root == "/"


@dataclass(frozen=True, slots=True)
class Target:
    """A resolved write target."""

    path: str
    """Normalised absolute path; for a glob, its fixed prefix."""
    glob: bool = False
    unknown: bool = False
    inside: bool = False
    """A glob that only matches entries strictly inside `path`, not all of them
    (`build/*.o`, `*.egg-info`, `*/cache`): never the prefix itself or its whole content."""


def resolve(raw: str, cwd: str, home: str) -> Target:
    """Resolve raw target text; globs resolve to their fixed prefix."""
    if not raw:
        return Target("", unknown=True)
    full = normalise(raw, cwd, home) if UNKNOWN not in raw else raw
    if UNKNOWN in full:
        return Target(full, unknown=True)
    if not any(c in _GLOB for c in full):
        return Target(full)
    parts = full.split("/")
    fixed = []
    for p in parts:
        if any(c in _GLOB for c in p):
            break
        fixed.append(p)
    prefix = "/".join(fixed) or "/"
    rest = [p for p in parts[len(fixed) :] if p]
    inside = len(rest) > 1 or bool(rest and _ALL.sub("", rest[0]))
    return Target(posixpath.normpath(prefix) if prefix != "/" else "/", glob=True, inside=inside)


def is_scratch(t: Target) -> bool:
    """Strictly inside /tmp or /var/tmp (a glob directly under them counts)."""
    for root in SCRATCH:
        if t.path.startswith(root + "/") or (t.glob and t.path == root):
            return True
    return False


def _fixed_prefix(raw: str, cwd: str, home: str) -> str | None:
    """Where an unresolvable target certainly lies: the folder written before its first
    unknown part (`build/$x` -> cwd/build), or None when nothing before it is fixed."""
    head = raw.split(UNKNOWN, 1)[0]
    if "/" not in head:
        return None
    return normalise(head.rsplit("/", 1)[0] or "/", cwd, home)


def harmless_unknown(raw: str, verb: Verb, cwd: str, home: str, workspace: str) -> bool:
    """An unresolvable target of a verb that destroys nothing (mkdir -p, touch, an append)
    whose fixed part, if any, stays inside the workspace or scratch space (`$dir`,
    `"$out/log"`, `build/$name`); never for delete, move, chmod, truncate or overwrite."""
    if verb not in ("create", "append") or ".." in raw:
        return False  # `$d/..`, `..$x/etc`: a sign of leaving
    head = raw.split(UNKNOWN, 1)[0]
    if head.startswith("~"):
        return False
    prefix = _fixed_prefix(raw, cwd, home)
    if prefix is None:
        return True
    if UNKNOWN in prefix:
        return False
    return is_scratch(Target(prefix + "/x")) or _strictly_inside(Target(prefix + "/x"), workspace)


def _strictly_inside(t: Target, workspace: str) -> bool:
    """Inside the workspace and not the workspace itself (nor a glob over all of it)."""
    ws = workspace.rstrip("/") or "/"
    if t.path.startswith(ws + "/"):
        return True
    return t.path == ws and t.glob and t.inside


def in_cache(t: Target, home: str) -> bool:
    """Strictly inside the home's cache folder, `~/.cache` (a glob over its entries counts; the folder does not)."""
    cache = home.rstrip("/") + "/.cache"
    return bool(home) and (t.path.startswith(cache + "/") or (t.glob and t.path == cache))


def judge_write(t: Target, verb: Verb, workspace: str, min_depth: int, home: str = "") -> list[str]:
    """Rule ids of the path policy that `verb` on `t` triggers (empty: fine).

    FS-001 recursive delete of a shallow path; FS-002 any other write to a
    shallow path; FS-003 recursive delete (or move) of the whole workspace; FS-004 delete
    of an unknown path; CONF-002 write to an unknown path; SYS-001 write into
    a system directory; CONF-001 write outside workspace and scratch (creating or deleting
    inside `home`'s `~/.cache` is fine: `_CACHE_SAFE`).

    The workspace is judged before the depth: strictly inside it (`/app/build`,
    `/app/*.egg-info`) nothing applies, whatever its depth. The workspace itself
    (`.`, `/app/*`) keeps the depth rule for what wipes it (recursive delete,
    move, truncate); `cp x .`, a filtered `find . -delete` or a chmod/chown of the project's own
    tree (`modes`: not `chmod -R 000 .` or `777`) is fine. A system folder or the home as workspace
    (`NOT_WORKSPACES`, `SYSTEM`, `home`) shields nothing.
    """
    if t.unknown:
        return ["FS-004"] if verb in ("delete", "rdelete") else ["CONF-002"]
    if t.path in HARMLESS or t.path.startswith("/dev/fd/"):
        return []
    if is_scratch(t) or (verb in _CACHE_SAFE and in_cache(t, home)):
        return []
    ws = workspace.rstrip("/") or "/"
    if ws not in NOT_WORKSPACES and under(t.path, ws):
        if _strictly_inside(t, ws):
            return []
        if (verb in _ROOT_SAFE and not (t.glob and verb == "delete")) or (verb == "move" and t.glob):
            return []  # `mv * sub/` moves entries; where they land is judged as its own target
        if verb == "modes" and ws != (home.rstrip("/") or "/") and ws not in SYSTEM:
            return []  # `chmod -R a+rX .`, `chown -R me .`: the project's own modes, whatever its depth
    eff = depth(t.path) + (1 if t.glob and (t.inside or t.path in ("/tmp", "/var/tmp")) else 0)
    if eff < min_depth:
        shallow = ["FS-001"] if verb == "rdelete" else ["FS-002"]
        return shallow + (["SYS-001"] if any(under(t.path, s) for s in SYSTEM) else [])
    if under(t.path, workspace):
        if (verb == "rdelete" or (verb == "move" and not t.glob)) and not t.inside \
                and t.path.rstrip("/") == workspace.rstrip("/"):
            return ["FS-003"]  # the whole workspace deleted, or moved away
        return []
    if t.path.startswith("/dev/"):
        return []  # device writes are judged by the DISK- rules
    if any(under(t.path, s) for s in SYSTEM):
        return ["SYS-001"]
    return ["CONF-001"]
