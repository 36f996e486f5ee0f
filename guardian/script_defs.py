"""Task and script definitions written by the line itself: judged as the commands they define.

`npm pkg set scripts.x="terraform destroy"` then `npm run x` runs a command
the guardian would ask about, but in two steps: the body is only data to
npm until a later command (or the person, on the host) runs it. So a body
set this way is judged as a command now, whether or not it runs in the same
line. A manifest moved or copied into place (`jq .. package.json > p.json &&
mv p.json package.json`) carries the content the analyser knows, or none:
then the runner that reads it asks (EXEC-002), as for any script it cannot read.
"""

from __future__ import annotations

import re
import shlex

from tether.guardian.paths import normalise
from tether.guardian.programs_table import MANIFEST_NAMES, MANIFESTS
from tether.guardian.rules import Inv

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from tether.guardian.analyse import Analyser

_NAMES = frozenset(MANIFESTS) | frozenset(n for names in MANIFEST_NAMES.values() for n in names)
_SCRIPT_KEY = re.compile(r"^scripts(?:\.|\[['\"]?)([^=\]'\"]+)(?:['\"]?\])?=(.*)$", re.S)
_JQ_SCRIPT = re.compile(r"""\.scripts(?:\.[\w:-]+|\[\s*"[^"]*"\s*\])\s*\|?=\s*"((?:[^"\\]|\\.)*)\"""")


def on_invocation(an: Analyser, inv: Inv, depth: int) -> None:
    """Bodies of scripts the invocation defines, and manifests it copies or moves into place."""
    env, cwd = inv.simple.env, inv.simple.cwd
    for body in _defined_scripts(inv):
        if body.strip():
            an.run(body, depth + 1, env, cwd)
    if inv.prog in ("cp", "mv", "install", "ln", "rsync"):
        _carry(an, inv)


def _defined_scripts(inv: Inv) -> list[str]:
    args = inv.args
    if inv.prog in ("npm", "pnpm", "bun"):
        words = [a for a in args if not a.startswith("-")]
        if words[:2] == ["pkg", "set"] or words[:3] == ["pm", "pkg", "set"]:
            out = []
            for w in words[2:]:
                m = _SCRIPT_KEY.match(w)
                if m:
                    out.append(m.group(2))
            return out
        if words[:1] == ["set-script"] and len(words) >= 3:
            return [words[2]]
    if inv.prog in ("jq", "gojq", "jaq", "yq"):
        out = []
        for a in args:
            for m in _JQ_SCRIPT.finditer(a):
                out.append(m.group(1).encode().decode("unicode_escape", "replace"))
        return out
    return []


def _carry(an: Analyser, inv: Inv) -> None:
    pos = [a for a in inv.positional if a != "--"]
    if len(pos) < 2:
        return
    dest_raw = pos[-1]
    name = dest_raw.rstrip("/").rsplit("/", 1)[-1]
    if name not in _NAMES:
        return
    dest = normalise(dest_raw, inv.simple.cwd, an.home)
    src = normalise(pos[0], inv.simple.cwd, an.home) if len(pos) == 2 else ""
    if src and src in an.files:
        an.files[dest] = an.files[src]
        if src in an.opaque:
            an.opaque.add(dest)
        else:
            an.opaque.discard(dest)
    elif not src and any(normalise(p, inv.simple.cwd, an.home) in an.files for p in pos[:-1]):
        an.files[dest] = ""  # several sources, one written in this line: which one lands is not known
        an.opaque.add(dest)


_RUNNER_CALL = re.compile(
    r"""(?:\b(?:c|ctx|context|conn|connection|session|shell)\.(?:run|sudo|local|run_always|run_install)|"""
    r"""\bsh|\bruby|\bexec(?:Sync)?|\bspawn(?:Sync)?|\bshell\.exec|\bcmd)\s*(\(?)([^()\n]*)""")
_LITERAL = re.compile(r"""(?:f|r)?(["'])((?:\\.|(?!\1).)*)\1""")
_DOIT_ACTION = re.compile(r"""["']actions["']\s*:\s*\[([^\]]*)\]""", re.S)


def runner_calls(code: str) -> list[str]:
    """Command strings a task runner's own file hands to its run helpers (invoke/fabric `c.run`, nox
    `session.run`, rake `sh`, doit `actions`, gulp `exec`): they are shell lines, not the language's calls."""
    out = []
    for m in _RUNNER_CALL.finditer(code):
        lits = [lit for _, lit in _LITERAL.findall(m.group(2))]
        if lits:
            out.append(lits[0] if len(lits) == 1 else shlex.join(lits))
    for m in _DOIT_ACTION.finditer(code):
        out += [lit for _, lit in re.findall(r"""(["'])((?:(?!\1).)+)\1""", m.group(1))]
    return out
