"""Hand-back that always completes: a workspace lent to the sandbox user comes back, at the latest on the next command.

Parts: `lending_record()` (where a lending of a workspace is recorded:
`<home>/lent/<key>.json`) and `settle_lendings()`, which any `tether`
command runs first: every lending left behind (a run killed mid-hand-back,
or a host that went down) whose workspace no live run holds (nor lies in a
live run's folder, as the gate's scratch copies do) is handed back
now, with no deadline, and the person is told in one line each.

Lending happens only when root owns the workspace (sandbox.workspace); a
hand-back cut short by its deadline is finished by the sandbox itself
(`Handover.take_back`), so this is the net for a process that died.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from tether.common.errors import TetherError
from tether.common.limits import WorkspaceLimits
from tether.common.liveness import LIVE_FILE, read_holder
from tether.runtime.workspace.lock import live_folders
from tether.sandbox.lending import LendingRecord, reclaim

LENT_DIR = "lent"


def lending_record(home: Path, workspace: Path) -> Path:
    """Where a lending of `workspace` is kept until given back: per workspace, so any later command reclaims it."""
    return home / LENT_DIR / (hashlib.sha256(str(workspace).encode()).hexdigest()[:16] + ".json")


def _in_live_run(home: Path, folder: Path) -> bool:
    """Whether `folder` lies in the folder of a run whose process still runs: the gate's scratch copies, lent to
    its sandboxes while the run works (gate.warm), are that run's to give back."""
    runs = home / "runs"
    if runs not in folder.parents:
        return False
    run = runs / folder.relative_to(runs).parts[0]
    try:
        with open(run / LIVE_FILE, encoding="utf-8", errors="replace") as fh:
            holder = read_holder(fh.read(1 << 16))
    except OSError:
        return False
    return holder is not None and not holder.paused and holder.alive()


def settle_lendings(home: Path, limits: WorkspaceLimits) -> list[str]:
    """Hand back every workspace a dead run left lent; one line per workspace for the person."""
    folder = home / LENT_DIR
    records = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not records:
        return []
    live = live_folders(home)
    notes: list[str] = []
    for path in records:
        record = LendingRecord(path)
        data = record.load()
        if data is None or data.get("workspace") in live or _in_live_run(home, Path(str(data["workspace"]))):
            continue
        workspace = Path(str(data["workspace"]))
        if not workspace.is_dir():
            record.clear()
            notes.append(f"{workspace} was lent to uid {data['uid']} by a run that stopped, and is gone now; "
                         "its lending record was removed")
            continue
        try:
            reclaim(workspace, record, limits)
        except (OSError, TetherError) as e:
            notes.append(f"{workspace} is still lent to uid {data['uid']} by a run that stopped, and could not be "
                         f"handed back ({e}); run any `tether` command as root to finish it, or `chown -R "
                         f"{data['owner'][0]}:{data['owner'][1]} {workspace}`")
            continue
        notes.append(f"{workspace} was still lent to uid {data['uid']} by a run that stopped; it was handed back to "
                     f"its owner ({data['owner'][0]}:{data['owner'][1]})")
    return notes
