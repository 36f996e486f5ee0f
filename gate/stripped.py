"""The after copy without the run's tests: the state the project's tests and the person's proof are judged on.

Parts: `Strip` (which files the run wrote are test code: new ones taken
out, changed test config and check scripts put back to their pre-run
bytes), `plan_strip()`, `strip()` and `put_back()`. The project's suites
and the person's checks run on the final implementation with the tests as
they were before the run ("after implementation + before tests"), so a test
module, conftest, pytest.ini, package.json `test` script or Makefile the
run wrote cannot be what proves the project's tests or the person's check
green. Edited tests that existed before stay as the run left them: they
make the run `needs-review` anyway, with the diff (gate.scan).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tether.common.manifest import FileState
from tether.common.walk import DIR_FLAGS, open_root, read_rel, remove_entry
from tether.gate.copies import _lay_one, _rel_mode
from tether.gate.rerun import TEST_CONFIG, is_test_path

RESTORE_CAP = 4 * 1024 * 1024
"""The most bytes of a pre-run file put back; a bigger one is taken out instead (nothing of the run's is used)."""


@dataclass
class Strip:
    """The run's test code in the after copy: what to take out and what to put back to its pre-run bytes."""

    remove: list[str] = field(default_factory=list)
    """New test files, test config and check scripts the run wrote."""
    restore: list[str] = field(default_factory=list)
    """Test config, build files (package.json's scripts, a Makefile) and check scripts that existed and changed."""

    def __bool__(self) -> bool:
        return bool(self.remove or self.restore)


def plan_strip(overlay: list[str], start: dict[str, FileState], written: list[str], named: Sequence[str] = ()) -> Strip:
    """From the run's test files (gate.rerun.mark_authorship's overlay): new ones out, changed config back. Test
    config or a build file the goal names (`fix the Makefile`) is the change itself and stays."""
    done = set(written)
    out = Strip()
    for rel in sorted(set(overlay) & done):
        base = rel.rsplit("/", 1)[-1]
        if base in TEST_CONFIG and (rel in named or base in named):
            continue
        if rel not in start:
            out.remove.append(rel)
        elif base in TEST_CONFIG or not is_test_path(rel):
            out.restore.append(rel)
    return out


def _parent(root: int, rel: str, create: bool = False) -> int | None:
    """A descriptor of `rel`'s folder, walked without following links (None when a component is missing)."""
    fd = os.dup(root)
    for part in rel.split("/")[:-1]:
        try:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
            sub = os.open(part, DIR_FLAGS, dir_fd=fd)
        except OSError:
            os.close(fd)
            return None
        os.close(fd)
        fd = sub
    return fd


def _pre_run(rel: str, snapshot: Path | None, folder: Path) -> bytes | None:
    """The pre-run bytes to put back; package.json keeps the run's version but for its `scripts`."""
    data = read_rel(snapshot, rel, RESTORE_CAP + 1) if snapshot is not None else None
    if data is None or len(data) > RESTORE_CAP:
        return None
    if rel.rsplit("/", 1)[-1] != "package.json":
        return data
    try:
        old, new = json.loads(data), json.loads(read_rel(folder, rel, RESTORE_CAP) or b"")
    except ValueError:
        return data
    if not isinstance(old, dict) or not isinstance(new, dict):
        return data
    new["scripts"] = old.get("scripts", {})
    if "scripts" not in old:
        del new["scripts"]
    return (json.dumps(new, indent=2) + "\n").encode()


def strip(folder: Path, stash: Path, plan: Strip, snapshot: Path | None) -> list[tuple[str, str]]:
    """Move the run's test code out of `folder` into `stash` (renamed, so modes, links and size are kept) and put
    the pre-run bytes of what it changed in their place; return what moved, for `put_back()`."""
    stash.mkdir(mode=0o700, exist_ok=True)
    root, aside = open_root(folder), open_root(stash)
    moved: list[tuple[str, str]] = []
    try:
        for i, rel in enumerate(plan.remove + plan.restore):
            old = _pre_run(rel, snapshot, folder) if rel in plan.restore else None
            mode = _rel_mode(folder, rel)
            parent = _parent(root, rel)
            if parent is None:
                continue
            try:
                os.rename(rel.rsplit("/", 1)[-1], str(i), src_dir_fd=parent, dst_dir_fd=aside)
                moved.append((rel, str(i)))
            except FileNotFoundError:
                continue
            finally:
                os.close(parent)
            if old is not None:
                _lay_one(root, rel, old, mode)
    finally:
        os.close(root)
        os.close(aside)
    return moved


def put_back(folder: Path, stash: Path, moved: list[tuple[str, str]]) -> None:
    """The run's versions back in place (whatever stands there now is replaced)."""
    root, aside = open_root(folder), open_root(stash)
    try:
        for rel, name in moved:
            parent = _parent(root, rel, create=True)
            if parent is None:
                continue
            try:
                remove_entry(parent, rel.rsplit("/", 1)[-1])
                os.rename(name, rel.rsplit("/", 1)[-1], src_dir_fd=aside, dst_dir_fd=parent)
            finally:
                os.close(parent)
    finally:
        os.close(root)
        os.close(aside)
