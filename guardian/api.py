"""`tether.guard(command, cwd)`: the guardian as a library call for other tools.

The working folder is taken as the workspace (an agent's own project
folder), unless `workspace` names another; `home` is the folder `~` stands
for. The answer is the same `Verdict` `tether guard --json` prints.
"""

from __future__ import annotations

import os
from pathlib import Path

from tether.guardian.checker import check
from tether.guardian.config import GuardianConfig
from tether.guardian.verdict import CheckContext, Verdict


def guard(command: str, cwd: str | os.PathLike[str] | None = None, *, workspace: str | os.PathLike[str] | None = None,
          home: str | os.PathLike[str] | None = None, config: GuardianConfig | None = None) -> Verdict:
    """The guardian's verdict on one bash command line; never raises for any command text."""
    where = Path(cwd) if cwd is not None else Path.cwd()
    context = CheckContext(workspace=Path(workspace) if workspace is not None else where, cwd=where,
                           home=Path(home) if home is not None else Path(os.path.expanduser("~")))
    return check(command, context, config)
