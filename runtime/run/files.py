"""The files of one run folder, read with their shape checked and written crash-safely.

Parts: `load_meta` / `save_meta` (run.json: what was asked and where the run
stands), and `AfterRun` (effects.json: the after-run phase's record, so a
resumed run applies memory and trust effects at most once and a finished run
reports its result again without changing anything).

Every failure is one line naming the file and the fix (common.errors).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tether.common.atomic import write_atomic
from tether.common.errors import StateFileError
from tether.runtime.run_ids import UnknownRunError, run_dir

META_FIELDS: dict[str, type] = {"run_id": str, "goal": str, "workspace": str, "model_spec": str, "status": str}
"""Keys run.json must hold, with their types."""
STATUSES = frozenset({"running", "success", "self-verified", "needs-review", "failed", "blocked", "interrupted"})
EFFECTS_FILE = "effects.json"


def load_meta(runs_dir: Path, run_id: str) -> dict[str, Any]:
    """run.json of `run_id`, shape checked; one-line errors for a missing or broken file."""
    folder = run_dir(runs_dir, run_id)
    path = folder / "run.json"
    if not folder.is_dir():
        msg = f"no run '{run_id}' under {runs_dir}; list runs with `tether runs`"
        raise UnknownRunError(msg)
    if not path.is_file():
        msg = (f"run folder {folder} has no run.json: the run was stopped (or the disk filled) before it "
               f"started, so nothing ran; start the goal again with `tether run`, and remove that folder")
        raise StateFileError(msg)
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise _corrupt(path, str(e).splitlines()[0] if str(e) else type(e).__name__) from e
    if not isinstance(data, dict):
        raise _corrupt(path, f"a JSON {type(data).__name__}, not an object")
    for key, kind in META_FIELDS.items():
        if not isinstance(data.get(key), kind):
            raise _corrupt(path, f"'{key}' missing or not a {kind.__name__}")
    if data["status"] not in STATUSES:
        raise _corrupt(path, f"unknown status {data['status']!r}")
    if data["run_id"] != run_id:
        raise _corrupt(path, f"it names run {data['run_id']!r}")
    return data


def _corrupt(path: Path, detail: str) -> StateFileError:
    return StateFileError(
        f"{path} is corrupt ({detail}); restore it from a backup, or remove the run folder {path.parent}"
    )


def work_folder(meta: dict[str, Any]) -> Path:
    """The folder the run's sandbox works in: a shadow run's copy, else the workspace itself."""
    return Path(meta.get("work") or meta["workspace"])


def save_meta(folder: Path, meta: dict[str, Any]) -> None:
    write_atomic(folder / "run.json", json.dumps(meta, indent=2, default=str))


class AfterRun:
    """effects.json: which after-run effects of a run were applied, and what they reported.

    Keys are effect names (`after_run` for the whole phase); a key present
    means the effect was applied and must not be applied again.
    """

    def __init__(self, folder: Path) -> None:
        self.path = folder / EFFECTS_FILE
        self.done: dict[str, Any] = self._read()

    def _read(self) -> dict[str, Any]:
        if not self.path.is_file():
            return {}
        try:
            data = json.loads(self.path.read_bytes().decode("utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            msg = (
                f"{self.path} is corrupt ({e}); remove it to let `tether resume` redo the after-run phase (memory "
                "skips what it already holds)"
            )
            raise StateFileError(msg) from e
        if not isinstance(data, dict):
            msg = (
                f"{self.path} is corrupt (not a JSON object); remove it to let `tether resume` redo the after-run phase"
            )
            raise StateFileError(msg)
        return data

    def has(self, key: str) -> bool:
        return key in self.done

    def get(self, key: str) -> Any:
        return self.done.get(key)

    def mark(self, key: str, value: Any = True) -> None:
        """Record `key` as applied (durably, before the caller moves on)."""
        self.done[key] = value
        write_atomic(self.path, json.dumps(self.done, indent=2, default=str))
