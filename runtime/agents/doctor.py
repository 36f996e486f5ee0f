"""`tether hook doctor AGENT`: prove the installed hook blocks a canary deny, end to end.

The doctor reads the agent's settings file, takes the command of each
installed Tether entry, and runs it as the agent would (through the shell,
the payload on stdin) with two canaries in the agent's documented payload
shape: `rm -rf /` must come back as a block in the agent's own terms, and
`ls` must not. The canary commands are never run: the hook only judges them.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tether.runtime.agents import registry
from tether.runtime.agents.settings import status

DENY_CANARY = "rm -rf /"
ALLOW_CANARY = "ls"
TIMEOUT_S = 60


def _run(command: str, payload: dict[str, Any], cwd: Path) -> tuple[int, str, str]:
    try:
        r = subprocess.run(command, shell=True, input=json.dumps(payload), capture_output=True, text=True,
                           timeout=TIMEOUT_S, cwd=cwd, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return -1, "", f"{type(e).__name__}: {e}"
    return r.returncode, r.stdout, r.stderr


def doctor(agent: str, path: Path, workspace: Path, tether_home: Path | None = None,
           others: list[Path] | None = None) -> dict[str, Any]:
    """The check's findings: `ok` when every installed command blocks the deny canary and passes the allow one,
    and no settings file of the agent (`path` and `others`, its other scopes) turns its hooks off."""
    adapter = registry.get(agent)
    found = status(agent, path, tether_home)
    report: dict[str, Any] = found | {"checks": [], "ok": False}
    off = [f"{p}: {why}" for p in [path, *(others or [])] if (why := status(agent, p, tether_home).get("disabled"))]
    if off:
        report["problem"] = "hooks are disabled: " + "; ".join(dict.fromkeys(off))
        return report
    if not found["installed"]:
        hand = f" (a hand-made entry runs it: {found['hand_made'][0]}; Tether did not write it)" \
            if found.get("hand_made") else ""
        report["problem"] = f"no Tether hook in {path}{hand}; run `tether hook install {agent}`"
        return report
    for command in found["commands"]:
        deny = _run(command, adapter.sample(DENY_CANARY, str(workspace)), workspace)  # type: ignore[attr-defined]
        allow = _run(command, adapter.sample(ALLOW_CANARY, str(workspace)), workspace)  # type: ignore[attr-defined]
        check = {"command": command,
                 "deny_blocked": adapter.blocked(deny[0], deny[1]),  # type: ignore[attr-defined]
                 "allow_passed": not adapter.blocked(allow[0], allow[1]),  # type: ignore[attr-defined]
                 "deny_answer": {"exit": deny[0], "stdout": deny[1][-500:], "stderr": deny[2][-500:]}}
        if allow[0] not in (0,):
            check["allow_answer"] = {"exit": allow[0], "stdout": allow[1][-500:], "stderr": allow[2][-500:]}
        report["checks"].append(check)
    report["ok"] = all(c["deny_blocked"] and c["allow_passed"] for c in report["checks"])
    return report
