"""Tasks in the Harbor layout (what Terminal-Bench uses), as `tether eval` reads them.

Parts: `Task` (one task folder), `TaskSet` (the tasks, split into train and
test or not), `load_tasks(folder)`, `scenario_for(task, method, trial)` (the
scripted model file a task names for a method).

A task folder holds `instruction.md` (the goal), `environment/` (its files
are copied into the workspace; an `environment/Dockerfile` is built into the
sandbox image), `tests/test.sh` and the files it needs (mounted read-only at
/tests only after the agent finished), and, for the scripted model only,
`scripted/<method>.yaml` (see docs/eval.md). TASKS is a folder of such
folders, or has `train/` and `test/` folders of them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from tether.common.errors import ConfigError
from tether.runtime.eval.task_config import TaskSettings, load_settings

MAX_INSTRUCTION_BYTES = 64 * 1024
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
Split = Literal["train", "test", "all"]
SCRIPTED = "scripted"


class Task(BaseModel):
    """One task folder."""

    name: str
    path: Path
    split: Split
    instruction: str
    settings: TaskSettings = TaskSettings()
    """Timeouts and resources from the task's task.toml."""

    @property
    def environment(self) -> Path:
        return self.path / "environment"

    @property
    def dockerfile(self) -> Path | None:
        found = self.environment / "Dockerfile"
        return found if found.is_file() else None

    @property
    def tests(self) -> Path:
        return self.path / "tests"


class TaskSet(BaseModel):
    """The tasks of one eval; `split` False means no train/ and test/ folders (online learning)."""

    root: Path
    split: bool
    train: list[Task]
    test: list[Task]


def _task(folder: Path, split: Split) -> Task:
    if not NAME.match(folder.name):
        msg = f"task folder name {folder.name!r} must be letters, digits, '.', '_' or '-'; rename it"
        raise ConfigError(msg)
    instruction = folder / "instruction.md"
    if not instruction.is_file():
        msg = f"task {folder} has no instruction.md; every task folder needs one (Harbor layout, see docs/eval.md)"
        raise ConfigError(msg)
    if not (folder / "tests" / "test.sh").is_file():
        msg = f"task {folder} has no tests/test.sh; the eval needs it to decide pass or fail"
        raise ConfigError(msg)
    raw = instruction.read_bytes()[: MAX_INSTRUCTION_BYTES + 1]
    if len(raw) > MAX_INSTRUCTION_BYTES:
        msg = f"{instruction} is over {MAX_INSTRUCTION_BYTES // 1024} KiB; shorten the instruction"
        raise ConfigError(msg)
    text = raw.decode("utf-8", errors="replace").strip()
    if not text:
        msg = f"{instruction} is empty; write the task's goal in it"
        raise ConfigError(msg)
    return Task(name=folder.name, path=folder.resolve(), split=split, instruction=text,
                settings=load_settings(folder))


def _tasks_in(folder: Path, split: Split) -> list[Task]:
    return [_task(p, split) for p in sorted(folder.iterdir()) if p.is_dir() and not p.name.startswith(".")]


def load_tasks(root: Path) -> TaskSet:
    """Read TASKS; ConfigError (one line, naming the fix) when it is not a Harbor task folder."""
    if not root.is_dir():
        msg = f"tasks folder {root} does not exist; pass a folder of Harbor-layout tasks"
        raise ConfigError(msg)
    if (root / "train").is_dir() or (root / "test").is_dir():
        if not ((root / "train").is_dir() and (root / "test").is_dir()):
            msg = f"{root} has only one of train/ and test/; add the other or put the tasks at the top level"
            raise ConfigError(msg)
        train, test = _tasks_in(root / "train", "train"), _tasks_in(root / "test", "test")
        split = True
    else:
        train, test, split = [], _tasks_in(root, "all"), False
    if not test:
        msg = f"{root} holds no task folders (each with instruction.md and tests/test.sh)"
        raise ConfigError(msg)
    names = [t.name for t in train + test]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        msg = f"task names must be unique across train/ and test/: {', '.join(dup)}; rename one"
        raise ConfigError(msg)
    return TaskSet(root=root.resolve(), split=split, train=train, test=test)


def scenario_for(task: Task, method: str, trial: int) -> Path:
    """The scripted model file for a method's trial: `<method>-<trial>.yaml`, `<method>.yaml`, `default.yaml`.

    `rerun` falls back to the `no-memory` files; training runs use `memory`'s.
    """
    folder = task.path / SCRIPTED
    names = [method] + (["no-memory"] if method == "rerun" else [])
    for name in names:
        for candidate in (folder / f"{name}-{trial}.yaml", folder / f"{name}.yaml"):
            if candidate.is_file():
                return candidate
    if (folder / "default.yaml").is_file():
        return folder / "default.yaml"
    msg = (f"task {task.name} has no scripted scenario for {method} trial {trial}; "
           f"add {SCRIPTED}/{method}.yaml (or {method}-{trial}.yaml, default.yaml) to it, see docs/eval.md")
    raise ConfigError(msg)
