"""`host_code.json`, what a run's after-run check found (runtime.run.settle writes it), read back.

Parts: `HOST_CODE` and `read_host_code()`. Show, the report and apply read
it; a damaged one is named, never taken for "nothing found".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HOST_CODE = "host_code.json"
"""What the after-run check found (the changed files, the places that run on the host), for show and the report."""
KEYS = ("files", "host_exec", "review")


def read_host_code(run_dir: Path) -> tuple[dict[str, Any] | None, str]:
    """host_code.json of a run and "" ((None, "") when not written yet), or (None, why it cannot be read).

    An unreadable record never reads as "nothing found": the why names the
    file and says that what the run left that runs on the host cannot be shown.
    """
    path = run_dir / HOST_CODE
    try:
        doc = json.loads(path.read_bytes().decode("utf-8"))
        problem = "" if isinstance(doc, dict) else f"a JSON {type(doc).__name__}, not an object"
    except FileNotFoundError:
        return None, ""
    except (OSError, ValueError) as e:
        doc, problem = None, (str(e).splitlines() or [type(e).__name__])[0]
    if not problem:
        bad = [k for k in KEYS if not isinstance(doc.get(k), list)]
        bad += [] if isinstance(doc.get("error", ""), str) else ["error"]
        problem = f"'{bad[0]}' missing or of the wrong type" if bad else ""
    if not problem:
        return doc, ""
    return None, (f"{path} is unreadable ({problem}): the run may have left code that runs on your machine that "
                  f"Tether cannot show; look at the run's changes with `tether show {run_dir.name} --diff` or "
                  f"`git status` before trusting it")
