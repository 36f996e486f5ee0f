"""The asks that only guard the person's machine, and so are moot in Tether's own sandbox.

A command judged with `CheckContext.sandbox` runs in a run's disposable
container, on a workspace the run snapshotted, with the network closed but
for a per-command grant (graphs.network). There:
    PROC-002 (`pkill -f PAT`, `killall NAME`): the only processes it can reach
        are the sandbox's own.
    PKG-001/002/004/005 (an install outside the project, from a URL or from
        another index): what it changes is the
        sandbox's environment (or a virtual environment in the workspace,
        which rollback restores); its setup code is code the agent could run
        anyway; the index it needs is the network ask, which names the hosts.
        One question, asked once. System packages (PKG-003) still ask.
    GIT-006 (`git checkout -- FILE`, `git restore FILE`): the discarded edits
        of named files inside the workspace come back by rollback. The whole
        tree (`.`, the workspace, a glob, `:/`, `--pathspec-from-file`),
        `-f`, `switch --discard-changes` and paths outside still ask.
On the person's machine (`tether guard`, the agent hooks) every one of them asks.

Parts:
    waived(an, rule_id, inv): whether a rule that fired on `inv` is moot here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tether.guardian.paths import normalise
from tether.guardian.rules_git import discarded_paths
from tether.guardian.words import UNKNOWN

if TYPE_CHECKING:
    from tether.guardian.analyse import Analyser
    from tether.guardian.rules import Inv

_MOOT = frozenset({"PROC-002", "PKG-001", "PKG-002", "PKG-004", "PKG-005"})
_GLOB = frozenset("*?[\\")


def waived(an: Analyser, rule_id: str, inv: Inv) -> bool:
    """Whether `rule_id`, fired on `inv`, is moot because the command runs in Tether's sandbox."""
    if not an.ctx.sandbox:
        return False
    if rule_id in _MOOT:
        return True
    if rule_id == "GIT-006":
        return _named_inside(an, inv)
    return False


def _named_inside(an: Analyser, inv: Inv) -> bool:
    """Every path whose edits are discarded is a named file or folder strictly inside the workspace."""
    paths = discarded_paths(inv)
    if not paths:
        return False
    ws = an.ws.rstrip("/")
    for p in paths:
        if not p or UNKNOWN in p or p.startswith(":") or any(c in _GLOB for c in p):
            return False
        full = normalise(p, inv.simple.cwd, an.home)
        if not full.startswith(ws + "/"):
            return False
    return True
