"""The durable record of a lent workspace, so a crash never leaves it lent.

Parts: `LendingRecord` (a JSON file written before the first chown of a
lending and removed once the workspace is given back) and `reclaim()`, which
gives back a workspace an earlier process lent and never returned (it was
SIGKILLed, or the host went down): the next sandbox on that workspace calls
it before it looks at who owns the folder.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from tether.common.atomic import write_atomic
from tether.common.limits import WorkspaceLimits

if TYPE_CHECKING:
    from tether.sandbox.workspace import Handover

log = logging.getLogger(__name__)


class LendingRecord:
    """One workspace's lending: its owner before, the uid:gid it went to, and each inode's owner."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def save(self, handover: Handover) -> None:
        """Write what `take_back()` needs; called before the first chown and again once all are done."""
        data = {"workspace": str(handover.workspace), "owner": list(handover.owner), "uid": handover.uid,
                "gid": handover.gid, "original": [[d, i, u, g] for (d, i), (u, g) in handover.original.items()]}
        write_atomic(self.path, json.dumps(data))

    def load(self) -> dict | None:
        """The record, or None when there is none (or it is unreadable: then nothing can be restored from it)."""
        try:
            data = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:
            log.warning(
                "lending record %s is unreadable (%s); remove it and chown the workspace back by hand", self.path, e
            )
            return None
        return data if isinstance(data, dict) and {"workspace", "owner", "uid", "gid"} <= data.keys() else None

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


def reclaim(workspace: Path, record: LendingRecord, limits: WorkspaceLimits | None = None) -> bool:
    """Give back a workspace an interrupted process lent; True when there was one to give back."""
    from tether.sandbox.workspace import Handover

    data = record.load()
    if data is None or data["workspace"] != str(workspace):
        return False
    handover = Handover(workspace, int(data["uid"]), int(data["gid"]), limits)
    handover.owner = (int(data["owner"][0]), int(data["owner"][1]))
    handover.original = {(int(d), int(i)): (int(u), int(g)) for d, i, u, g in data.get("original", [])}
    log.warning(
        "workspace %s was still lent to %s:%s by an interrupted run; giving it back",
        workspace,
        data["uid"],
        data["gid"],
    )
    handover.take_back()
    record.clear()
    return True
