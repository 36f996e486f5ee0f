"""`npm run SCRIPT` (yarn, pnpm, bun): the script's body, read from the workspace's package.json, judged.

A script's name says nothing (`npm run db:fresh` may be `prisma migrate reset
--force`), so the body is read where npm reads it: the nearest package.json
from the working folder up to the workspace, on this machine (`Where.files`:
Tether's sandbox mounts the workspace elsewhere). The read is bounded
(1 MiB), by file descriptor from the workspace down, following no link
(O_NOFOLLOW on every component). The body, with its `pre`/`post` scripts, is
analysed on its own; what counts is what counts for a command run elsewhere:
deny-level findings and data or infrastructure destruction (a database
reset, a cloud delete). A package.json that cannot be read safely (a link, not
a regular file, over the bound, not JSON) or a working folder unknown until
run time asks (EXEC-006, registered in `rules_programs`). No package.json: npm finds no script, nothing runs.
A package.json written earlier in the line is `program_pass`'s (manifests).

Parts:
    on_invocation(an, inv, depth, isolated): the findings of the script `inv` runs.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Callable
from typing import TYPE_CHECKING

from tether.guardian.escapes import Act
from tether.guardian.paths import normalise, under
from tether.guardian.words import UNKNOWN

if TYPE_CHECKING:
    from tether.guardian.analyse import Analyser
    from tether.guardian.rules import Inv

MAX_BYTES = 1 << 20
_COUNTS = ("cloud-destructive", "database-destructive")
_NPM_RUN = frozenset({"run", "run-script", "rum", "urn"})
_NPM_NAMED = {"test": "test", "t": "test", "tst": "test", "start": "start", "stop": "stop", "restart": "restart"}
_YARN_OWN = frozenset(
    "add audit autoclean bin cache check config create dedupe dlx exec explain generate-lock-entry global help "
    "import info init install licenses link list login logout node npm outdated owner pack patch patch-commit "
    "plugin policies publish rebuild remove search set stage tag team unlink unplug up upgrade upgrade-interactive "
    "version versions why workspace workspaces".split())
"""yarn's own commands: any other first word is a script (`yarn db:reset`)."""
_PNPM_OWN = frozenset(
    "add audit bin config create dedupe deploy dlx env exec fetch i import init install install-test link list ls "
    "licenses outdated pack patch patch-commit prune publish rb rebuild remove rm root server setup store un "
    "uninstall unlink up update why".split())
"""pnpm's own commands: any other first word is a script (`pnpm db:reset`)."""
_VALUED = frozenset({"--prefix", "-C", "--cwd", "--dir", "-w", "--workspace", "--filter", "-F", "--loglevel",
                     "--script-shell", "--node-options", "--registry", "--cache", "--userconfig"})

Isolated = Callable[..., list]


def _script(inv: Inv) -> tuple[str, str] | None:
    """(script name, folder option value or "") of a script run, or None."""
    args = inv.args
    pos: list[str] = []
    folder = ""
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            break
        if a in _VALUED and i + 1 < len(args):
            folder = args[i + 1] if a in ("--prefix", "-C", "--cwd", "--dir") else folder
            i += 2
            continue
        if a.startswith(("--prefix=", "--cwd=", "--dir=")):
            folder = a.split("=", 1)[1]
        elif not a.startswith("-"):
            pos.append(a)
        i += 1
    if not pos:
        return None
    prog = "npm" if inv.prog in ("npm", "npm.cmd") else inv.prog
    if prog == "npm":
        if pos[0] in _NPM_NAMED:
            return _NPM_NAMED[pos[0]], folder
        return (pos[1], folder) if pos[0] in _NPM_RUN and len(pos) > 1 else None
    if prog in ("yarn", "pnpm", "bun"):
        if pos[0] == "run":
            return (pos[1], folder) if len(pos) > 1 else None
        own = {"yarn": _YARN_OWN, "pnpm": _PNPM_OWN}.get(prog)
        if own is not None and pos[0] not in own:
            return pos[0], folder
    return None


def on_invocation(an: Analyser, inv: Inv, depth: int, isolated: Isolated) -> None:
    """Judge the body of the package.json script `inv` runs (and its pre/post scripts)."""
    if inv.prog not in ("npm", "yarn", "pnpm", "bun") or an.guessing:
        return
    found = _script(inv)
    if found is None:
        return
    name, folder = found
    cwd = inv.simple.cwd
    start = normalise(folder, cwd, an.home) if folder and UNKNOWN not in folder else cwd
    if UNKNOWN in start or (folder and UNKNOWN in folder):
        an._hit("EXEC-006", inv.prog, "its folder is unknown until run time")
        return
    if any(p.endswith("/package.json") and under(p, start) for p in an.files):
        return  # written in this line: program_pass reads it as a manifest
    scripts, why = read_scripts(an, start)
    if why:
        an._hit("EXEC-006", inv.prog, why)
        return
    for key in (f"pre{name}", name, f"post{name}"):
        body = scripts.get(key)
        if not isinstance(body, str) or not body.strip():
            continue
        for h in isolated(an, Act("shell", body), inv, inv.simple, depth):
            if h.decision == "deny" or h.category in _COUNTS:
                an.hits.setdefault((h.id, h.program), h)


def read_scripts(an: Analyser, start: str) -> tuple[dict, str]:
    """The `scripts` of the nearest package.json from `start` up to the workspace, and why it could not be
    read ("" when it could, or when there is none)."""
    ws = an.ws.rstrip("/") or "/"
    if not under(start, ws):
        return {}, f"{start} is outside the workspace"
    an.volatile = True  # the verdict depends on a file: never cached
    root = str(getattr(an.ctx, "files", None) or ws)
    rel = [c for c in start[len(ws):].split("/") if c]
    for n in range(len(rel), -1, -1):
        try:
            text = _read(root, [*rel[:n], "package.json"])
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as e:
            return {}, f"package.json in {'/'.join([ws, *rel[:n]])}: {e}"[:160]
        try:
            data = json.loads(text)
        except ValueError:
            return {}, "package.json is not JSON"
        scripts = data.get("scripts") if isinstance(data, dict) else None
        return (scripts if isinstance(scripts, dict) else {}), ""
    return {}, ""


def _read(root: str, parts: list[str]) -> str:
    """The file at root/parts, opened by descriptor without following any link, at most MAX_BYTES."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))  # the person's
    try:
        for part in parts[:-1]:
            nxt = os.open(part, flags | getattr(os, "O_DIRECTORY", 0), dir_fd=fd)
            os.close(fd)
            fd = nxt
        try:
            leaf = os.open(parts[-1], flags | getattr(os, "O_NONBLOCK", 0), dir_fd=fd)
        except OSError as e:
            if e.errno == errno.ELOOP:
                msg = "package.json is a link"
                raise ValueError(msg) from e
            raise
    finally:
        os.close(fd)
    try:
        st = os.fstat(leaf)
        if not stat.S_ISREG(st.st_mode):
            msg = "package.json is not a regular file"
            raise ValueError(msg)
        if st.st_size > MAX_BYTES:
            msg = f"package.json is over {MAX_BYTES} bytes"
            raise ValueError(msg)
        data = os.read(leaf, MAX_BYTES + 1)
    finally:
        os.close(leaf)
    if len(data) > MAX_BYTES:
        msg = f"package.json is over {MAX_BYTES} bytes"
        raise ValueError(msg)
    return data.decode("utf-8", "replace")
