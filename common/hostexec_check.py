"""Which of a run's changes leave code that the person's tools run on the host: `host_exec_changes()`.

Parts: `HostExecChange` (one finding: path, kind, what runs it, what
changed, and what was done about it), `Tree` (reads a folder by descriptor:
the workspace now, or the pre-run snapshot), `host_exec_changes(start, end,
before, after)` and `review_lines()` (one line per finding, for the gate's
review list and the run's reason).

A change counts when it is to a place in common.hostexec's table and, for
the places judged by content, when the content now makes a tool run
something it did not run before: a git config entry that runs a program (or
one Tether does not know), a `.gitattributes` driver, a `package.json`
install script, a `.pyc` that is not its compiled source. Deletions never
plant code and are shown by the diff alone. Everything is read by file
descriptor with byte bounds; what cannot be read counts against the run.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import stat as st_mod
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from tether.common.gitconfig import (
    ConfigSyntaxError,
    attribute_drivers,
    config_paths,
    exec_items,
    parse_config,
)
from tether.common.hostexec import (
    EXEC_PREFIXES,
    EXEC_VARIABLES,
    LIFECYCLE,
    Context,
    Place,
    env_roots,
    git_dirs,
    place_of,
)
from tether.common.manifest import FileState, diff
from tether.common.pycheck import classify
from tether.common.snapshot import to_text
from tether.common.walk import DIR_FLAGS, open_root, read_rel, shown

READ_CAP = 1 << 20
HOST_PREFIX = "code that runs on your machine: "
MAX_FINDINGS = 500
MAX_LINKS = 2000
Status = Literal["left", "removed", "undone"]


class HostExecChange(BaseModel):
    """One change to a place that runs on the host, and what became of it."""

    path: str
    """Workspace-relative path as text (undecodable bytes as `\\xNN`)."""
    key: str
    """The exact name, encoded like snapshot names (common.snapshot.to_text), for putting it back."""
    change: Literal["added", "modified", "deleted"]
    kind: str
    runs: str
    """When the person's tools run it."""
    detail: str = ""
    """What in it runs (`core.fsmonitor = ./x`), when judged by content."""
    review: bool = True
    """A person must look at it (False for a cache Tether removed that only could not be checked)."""
    status: Status = "left"
    """left in the workspace, removed (a cache), or undone (put back as before the run)."""
    group: str = ""
    """The environment folder a Python environment file belongs to (findings there are told as one)."""

    def line(self) -> str:
        """One line for people: path, kind, what runs, when, and what was done."""
        what = f" ({self.detail})" if self.detail else ""
        done = {"left": "", "removed": "; Tether removed it",
                "undone": "; Tether removed it" if self.change == "added" else "; Tether put it back as before the run"}
        return f"{self.path}: {self.kind} {self.change}{what}; runs on {self.runs}{done[self.status]}"


class Tree:
    """A folder read by descriptor (no symlink followed): the workspace, or the snapshot's copy of it."""

    def __init__(self, root: Path | None) -> None:
        self.root = root

    def read(self, rel: str, limit: int = READ_CAP) -> bytes | None:
        if self.root is None:
            return None
        try:
            return read_rel(self.root, rel, limit)
        except OSError:
            return None

    def stat(self, rel: str) -> tuple[int, int] | None:
        """(mtime seconds, size) of a regular file at `rel`, walking its folders by descriptor."""
        if self.root is None:
            return None
        parts = [p for p in rel.split("/") if p]
        if not parts or any(p in (".", "..") for p in parts):
            return None
        fds: list[int] = []
        try:
            fds.append(open_root(self.root))
            for part in parts[:-1]:
                fds.append(os.open(part, DIR_FLAGS, dir_fd=fds[-1]))
            st = os.stat(parts[-1], dir_fd=fds[-1], follow_symlinks=False)
        except OSError:
            return None
        finally:
            for fd in fds:
                os.close(fd)
        return (int(st.st_mtime), st.st_size) if st_mod.S_ISREG(st.st_mode) else None


_CONFIG_NAMES = frozenset({"config", "config.worktree", ".gitmodules", ".lfsconfig", ".gitconfig"})


def _links(states: Iterable[tuple[str, FileState]], mount: str, host_root: str) -> frozenset[tuple[str, str]]:
    """(target, link) for each symlink that points inside the workspace (never at its root), at most MAX_LINKS."""
    out: set[tuple[str, str]] = set()
    for rel, state in states:
        if state.link is None:
            continue
        for target in _inside(state.link, posixpath.dirname(rel), mount, host_root):
            if target and target != rel:
                out.add((target, rel))
        if len(out) >= MAX_LINKS:
            break
    return frozenset(out)


def _context(paths: set[str], after: Tree, mount: str, host_root: str,
             links: frozenset[tuple[str, str]] = frozenset()) -> Context:
    """Bare repositories, environments, links, and the hooks folders and includes the git configs name."""
    bare = git_dirs(paths)
    hooks: set[str] = set()
    includes: set[str] = set()
    for rel in paths:
        if rel.rpartition("/")[2] not in _CONFIG_NAMES and not rel.startswith(".config/git/"):
            continue  # cheap first: only files named like a git config can be one
        place = place_of(rel, Context(bare=frozenset(bare), links=links))
        if place is None or place.check != "git-config":
            continue
        try:
            found_hooks, found_includes = config_paths(parse_config(after.read(rel) or b""))
        except ConfigSyntaxError:
            continue
        repo = _repo_root(rel)
        for value in found_hooks:
            hooks.update(_inside(value, repo, mount, host_root))
        for value in found_includes:
            includes.update(_inside(value, posixpath.dirname(rel), mount, host_root))
    return Context(bare=frozenset(bare), envs=frozenset(env_roots(paths)), hooks=frozenset(hooks),
                   includes=frozenset(includes), links=links)


def _repo_root(config_rel: str) -> str:
    """The folder hooks run in for a config at `config_rel` (the parent of `.git`, or a bare repository)."""
    parts = config_rel.split("/")
    if ".git" in parts:
        return "/".join(parts[: parts.index(".git")])
    return posixpath.dirname(config_rel)


def _inside(value: str, base: str, mount: str, host_root: str) -> list[str]:
    """`value` (a path a config names) as a workspace-relative path, when it is inside the workspace."""
    if value.startswith("~"):
        return []
    for root in (mount.rstrip("/"), host_root.rstrip("/")):
        if root and value.startswith(root + "/"):
            value = value[len(root) + 1:]
            break
    else:
        if value.startswith("/"):
            return []
        value = posixpath.join(base, value)
    value = posixpath.normpath(value)
    return [] if value.startswith("..") else ["" if value == "." else value]


def _config_detail(before: bytes | None, after: bytes | None) -> str | None:
    """What the change to a git config makes git run ("" when nothing new), or why it cannot be read."""
    try:
        now = exec_items(parse_config(after or b""))
    except ConfigSyntaxError as e:
        return f"not readable as git config: {e}"
    try:
        was = set(exec_items(parse_config(before or b"")))
    except ConfigSyntaxError:
        was = set()
    new = [item for item in now if item not in was]
    gone = [item for item in was if item not in set(now)]
    parts = [f"sets {k} = {v!r}" + ("" if when else " (a key Tether does not know)") for k, v, when in new[:6]]
    parts += [f"removes {k}" for k, _, _ in gone[:3]]
    return "; ".join(parts)


def _attributes_detail(before: bytes | None, after: bytes | None) -> str | None:
    try:
        now = attribute_drivers(after or b"")
    except ConfigSyntaxError as e:
        return f"not readable as attributes: {e}"
    try:
        was = attribute_drivers(before or b"")
    except ConfigSyntaxError:
        was = set()
    new = sorted(now - was)
    return "names driver " + ", ".join(new[:6]) if new else ""


def _scripts(data: bytes | None) -> dict[str, str] | None:
    if data is None:
        return {}
    try:
        doc = json.loads(data.removeprefix(b"\xef\xbb\xbf").decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return {}
    scripts = doc.get("scripts")
    out = {f"scripts.{k}": str(v) for k, v in (scripts.items() if isinstance(scripts, dict) else ())
           if k in LIFECYCLE or (k.startswith(("pre", "post")) and k not in ("prettier", "preview", "postcss"))}
    for field in ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies"):
        deps = doc.get(field)
        for name, spec in (deps.items() if isinstance(deps, dict) else ()):
            if isinstance(spec, str) and _LOCAL_DEP.search(spec):
                out[f"{field}.{name}"] = spec  # installing it runs that package's own install scripts
    return out


def _package_detail(before: bytes | None, after: bytes | None) -> str | None:
    now, was = _scripts(after), _scripts(before) or {}
    if now is None:
        return "not readable as JSON"
    new = {k: v for k, v in now.items() if was.get(k) != v}
    return "; ".join(f"{k} = {v[:120]!r}" for k, v in sorted(new.items())[:6]) if new else ""


def _env_vars(data: bytes | None) -> dict[str, str]:
    """NAME -> value of the `NAME=value` lines (`export` allowed) that make programs run code, or that run a
    command themselves when a shell sources the file (`$(...)`, backquotes)."""
    out = {}
    for line in (data or b"").decode("utf-8", "replace").splitlines():
        name, eq, value = line.strip().removeprefix("export ").partition("=")
        name = name.strip()
        if not eq:
            if _SUBSTITUTION.search(line):
                out[line.strip()[:40]] = "(a command a shell runs when it sources the file)"
            continue
        if name in EXEC_VARIABLES or name.startswith(EXEC_PREFIXES) or _SUBSTITUTION.search(value):
            out[name] = value.strip()
    return out


def _dotenv_detail(before: bytes | None, after: bytes | None) -> str:
    now, was = _env_vars(after), _env_vars(before)
    new = {k: v for k, v in now.items() if was.get(k) != v}
    return "; ".join(f"sets {k}={v[:80]!r}" for k, v in sorted(new.items())[:6])


def _detail(place: Place, rel: str, before: Tree, after: Tree) -> str | None:
    """None when the change does not count; else what runs ("" when the whole place counts)."""
    if place.check == "any":
        return ""
    if place.check == "git-hook":
        return None if rel.endswith(".sample") else ""
    old, new = before.read(rel), after.read(rel)
    if place.check == "git-config":
        found = _config_detail(old, new)
    elif place.check == "attributes":
        found = _attributes_detail(old, new)
    elif place.check == "dotenv":
        found = _dotenv_detail(old, new)
    elif place.check == "tool-plugins":
        found = _plugins_detail(old, new)
    elif place.check == "git-ignore":
        rules = [line for line in _added_lines(old, new) if line and not line.startswith("#")]
        found = "hides " + ", ".join(repr(r[:60]) for r in rules[:6]) if rules else ""
    elif place.check == "git-ref":
        found = _ref_detail(rel, old, new, after)
    else:
        found = _package_detail(old, new)
    return found or None


def _added_lines(before: bytes | None, after: bytes | None) -> list[str]:
    """The lines of `after` that `before` does not hold, stripped, in order."""
    was = set((before or b"").decode("utf-8", "replace").splitlines())
    return [line.strip() for line in (after or b"").decode("utf-8", "replace").splitlines() if line not in was]


def _plugins_detail(before: bytes | None, after: bytes | None) -> str:
    """The lines a change adds to a tool's config that load plugins (pytest -p, plugins =, init-hook, ...)."""
    new = [line for line in _added_lines(before, after) if _PLUGIN_LINE.search(line)]
    return "; ".join(f"adds {line[:100]!r}" for line in new[:4])


def _ref_detail(rel: str, before: bytes | None, after: bytes | None, tree: Tree) -> str:
    """What a change to a ref moves, unless it is the branch checked out now (its commits are the run's work
    on the files the diff shows)."""
    gitdir = rel[: rel.rindex("/.git/") + 6] if "/.git/" in rel else rel[: rel.index(".git/") + 5]
    head = (tree.read(gitdir + "HEAD", 4096) or b"").decode("utf-8", "replace").strip()
    current = head.removeprefix("ref:").strip() if head.startswith("ref:") else ""
    if rel.endswith("packed-refs"):
        was, now = _packed(before), _packed(after)
        moved = sorted(ref for ref, sha in now.items() if was.get(ref) != sha and ref != current)
        return "; ".join(f"{ref} now at {now[ref][:12]}" for ref in moved[:6])
    ref = rel[len(gitdir):]
    if ref == current:
        return ""
    target = (after or b"").decode("utf-8", "replace").strip()
    return f"{ref} now at {target[:40]}"


def _packed(data: bytes | None) -> dict[str, str]:
    out = {}
    for line in (data or b"").decode("utf-8", "replace").splitlines():
        sha, _, ref = line.partition(" ")
        if ref and not line.startswith(("#", "^")):
            out[ref.strip()] = sha
    return out


_LOCAL_DEP = re.compile(r"^(?:file:|link:|git\+|git:|github:|gitlab:|bitbucket:|https?:)|\.(?:tgz|tar\.gz)$")
_SUBSTITUTION = re.compile(r"\$\(|`")
_PLUGIN_LINE = re.compile(r"(?:^|[\s=\"'])-p\s*[\w.:-]+|^\s*(?:plugins|required_plugins|pytest_plugins|init-hook|"
                          r"load-plugins|addopts\s*=.*-p)\b", re.IGNORECASE)
SHADOW = Place("python import shadow", re.compile(r"$^"),
               "`python` or `pytest` here: an import of that name loads this file instead of the module the "
               "person has")
_TOOL_MODULES = frozenset({"pytest", "_pytest", "pip", "setuptools", "pkg_resources", "wheel", "six",
                           "typing_extensions", "requests", "urllib3", "yaml", "numpy", "pydantic", "attr", "attrs",
                           "pluggy", "py", "coverage", "hypothesis", "mock", "nose", "tox", "virtualenv", "certifi",
                           "idna"})
_HONEST_NAMES = frozenset({"test", "__main__", "this", "antigravity"})
"""Standard-library names that projects use for their own files and nothing imports by accident."""
_EXT = re.compile(r"^(?P<name>[A-Za-z_]\w*)(?:\.[\w-]+)?\.(?:so|pyd)$")


def shadows(rel: str, end: dict[str, FileState]) -> str:
    """Why an added file takes an import name from something the person has ("" when it does not): a module,
    package or extension module named like the standard library or a common tool, or one that wins over a
    module of the same name beside it (Python tries a package, then extension modules, before `NAME.py`)."""
    head, _, name = rel.rpartition("/")
    folder = f"{head}/" if head else ""
    if name == "__init__.py" and head:
        module, kind, parent = head.rpartition("/")[2], "package", head.rpartition("/")[0]
        beside = [f"{parent}/{module}.py" if parent else f"{module}.py"]
    elif (ext := _EXT.match(name)) is not None:
        module, kind = ext["name"], "extension module"
        beside = [f"{folder}{module}.py", f"{folder}{module}/__init__.py"]
    elif name.endswith(".py") and name[:-3].isidentifier():
        module, kind, beside = name[:-3], "module", []
    else:
        return ""
    if any(part in ("site-packages", "dist-packages", "__pycache__") for part in rel.split("/")):
        return ""
    if (module in sys.stdlib_module_names and module not in _HONEST_NAMES) or module in _TOOL_MODULES:
        return f"a {kind} named like {module!r} from the standard library or an installed tool"
    other = next((b for b in beside if b in end), None)
    return f"a {kind} that Python imports instead of {shown(other)}" if other else ""


BYTECODE = {"mismatch": "does not match its source", "sourceless": "has no source: Python imports it as is",
            "unchecked": "Tether cannot check it against its source"}


def host_exec_changes(start: dict[str, FileState], end: dict[str, FileState], before: Tree, after: Tree, *,
                      mount: str = "", host_root: str = "") -> list[HostExecChange]:
    """Every added or modified place that now runs something on the host, sorted by path."""
    delta = diff(start, end)
    links = _links([*end.items(), *start.items()], mount, host_root)
    ctx = _context(set(end) | set(start), after, mount, host_root, links)
    found: list[HostExecChange] = []
    caches: list[tuple[str, Place, str]] = []
    for change, paths in (("added", delta.added), ("modified", delta.modified)):
        for rel in paths:
            place = place_of(rel, ctx)
            if place is None:
                shadowed = shadows(rel, end) if change == "added" else None
                if shadowed:
                    found.append(HostExecChange(path=shown(rel), key=to_text(rel), change=change,
                                                kind=SHADOW.kind, runs=SHADOW.runs, detail=shadowed))
                continue
            if place.check == "bytecode":
                caches.append((rel, place, change))
                continue
            detail = _detail(place, rel, before, after)
            if detail is not None:
                found.append(HostExecChange(path=shown(rel), key=to_text(rel), change=change, kind=place.kind,
                                            runs=place.runs, detail=detail, group=_env_group(rel, ctx)))
    verdicts = classify([rel for rel, _, _ in caches], after.read, after.stat)
    for rel, place, change in caches:
        verdict = verdicts.get(rel, "unchecked")
        if verdict in BYTECODE:
            found.append(HostExecChange(path=shown(rel), key=to_text(rel), change=change, kind=place.kind,
                                        runs=place.runs, detail=BYTECODE[verdict], review=verdict != "unchecked"))
    found.sort(key=lambda c: c.path)
    return found[:MAX_FINDINGS]


def _env_group(rel: str, ctx: Context) -> str:
    """The environment folder `rel` is in ("" when none): a known root, or the folder above site-packages."""
    for root in sorted(ctx.envs, key=len, reverse=True):
        if not root or rel.startswith(root + "/"):
            return shown(root) or "."
    for marker in ("/site-packages/", "/dist-packages/"):
        if marker in "/" + rel:
            return shown(("/" + rel).split(marker)[0].lstrip("/")) or "."
    return ""


def review_lines(changes: Iterable[HostExecChange]) -> list[str]:
    """One review reason per finding still needing a person (an environment's files told as one line)."""
    out: list[str] = []
    envs: dict[str, list[HostExecChange]] = {}
    for c in changes:
        if not c.review or c.status == "undone":
            continue
        if c.group and c.kind in ("python environment", "python start-up hook", "python bytecode"):
            envs.setdefault(c.group, []).append(c)
            continue
        out.append(HOST_PREFIX + c.line())
    for root, items in envs.items():
        names = ", ".join(c.path for c in items[:3]) + (f" and {len(items) - 3} more" if len(items) > 3 else "")
        out.append(f"{HOST_PREFIX}Python environment {root}: {len(items)} file(s) changed "
                   f"({names}); runs on activating or running programs of that environment")
    return out
