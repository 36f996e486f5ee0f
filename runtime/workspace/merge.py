"""The one three-way merge rollback and apply share: base (a run's start), the run's end, the folder now.

Parts: `Item` (one path: the version the folder is expected to hold, and the
version to put there), `Plan` (steps, conflicts, what is already done),
`plan()`, and `Conflict`. `runtime.workspace.writer` carries a plan out.

For each path a run changed, and no other: when the folder holds the
target already, nothing is done; when it holds what was expected, a step
puts the target there; anything else is a conflict (someone changed it
since). Rollback expects the run's end and puts back its start; apply
expects the start and puts the run's end. A folder is removed only when
everything in it goes too, and nothing is written below a folder that is
missing or is no longer a real folder (never through a symlink). With
`force`, conflicts become steps (what they overwrite is backed up), but a
folder holding entries the run never made is still kept.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from tether.common.walk import DIR_FLAGS, Deadline, shown
from tether.runtime.workspace.versions import Located, Version, describe, look, matches, open_file, opened, parent_fd


@dataclass
class Item:
    """One path: `expected` is what the folder should hold now, `target` what to put there."""

    rel: str
    expected: Located
    target: Located
    unknown_expected: bool = False
    """The expected version was never recorded (the run was killed): the path is always a conflict."""


class Conflict(BaseModel):
    """A path left alone, and why."""

    path: str
    """Shown name (undecodable bytes as `\\xNN`)."""
    why: str
    now: str
    expected: str
    target: str


@dataclass
class Step:
    """What to do at one path: `now` is what the folder holds there (None: absent)."""

    item: Item
    now: Version | None
    forced: bool = False

    @property
    def removes(self) -> bool:
        """The entry there goes first (absent at the target, or another type)."""
        t = self.item.target.version
        return self.now is not None and (t is None or t.type != self.now.type)

    @property
    def writes(self) -> bool:
        t = self.item.target.version
        return t is not None and not (t.type == "dir" and self.now is not None and self.now.type == "dir")


@dataclass
class Plan:
    """What a rollback or an apply would do; nothing is done while `conflicts` is not empty (unless forced)."""

    workspace: Path
    steps: list[Step] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    kept: list[Conflict] = field(default_factory=list)
    """Forced, but still not done: a folder holding entries the run never made, or a missing folder."""
    already: list[str] = field(default_factory=list)

    @property
    def blocked(self) -> bool:
        return bool(self.conflicts)


def _depth(rel: str) -> tuple[int, str]:
    return rel.count("/"), rel


def _conflict(item: Item, now: Version | None, why: str) -> Conflict:
    return Conflict(path=shown(item.rel), why=why, now=describe(now), expected=describe(item.expected.version),
                    target=describe(item.target.version))


class _View:
    """The folder now, or as it will be after earlier plans (`overlay`: rel -> version and its tree)."""

    def __init__(self, workspace: Path, root: int, overlay: dict[str, Located] | None) -> None:
        self.workspace, self.root, self.overlay = workspace, root, overlay or {}

    def at(self, rel: str) -> tuple[Located, str]:
        if rel in self.overlay:
            return self.overlay[rel], ""
        for up in _ancestors(rel):
            if up in self.overlay and (v := self.overlay[up].version) is not None and v.type != "dir":
                return Located(None, None, rel), up
        version, blocked = look(self.root, rel)
        return Located(version, self.workspace, rel), blocked

    def children(self, rel: str) -> set[str]:
        found: set[str] = set()
        parent, _ = parent_fd(self.root, rel + "/x")
        if parent is not None:
            try:
                with os.scandir(parent) as it:
                    found = {f"{rel}/{d.name}" for d in it}
            finally:
                os.close(parent)
        found -= {r for r, loc in self.overlay.items() if loc.version is None}
        found |= {r for r, loc in self.overlay.items() if loc.version is not None and r.rpartition("/")[0] == rel}
        return found


def _ancestors(rel: str) -> list[str]:
    parts = rel.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def plan(workspace: Path, items: list[Item], cap: int, *, force: bool = False,
         overlay: dict[str, Located] | None = None, deadline: Deadline | None = None) -> Plan:
    """Decide, for each item, nothing / a step / a conflict, against the folder now (or `overlay` over it)."""
    out = Plan(workspace=workspace)
    with opened(workspace) as root:
        view = _View(workspace, root, overlay)
        for item in sorted(items, key=lambda i: _depth(i.rel)):
            now, _ = view.at(item.rel)
            if matches(now, item.target, cap, deadline):
                out.already.append(shown(item.rel))
            elif not item.unknown_expected and matches(now, item.expected, cap, deadline):
                out.steps.append(Step(item, now.version))
            elif force:
                out.steps.append(Step(item, now.version, forced=True))
            else:
                why = ("the run's end was never recorded (it was killed, or ran under an older Tether), so this may "
                       "be your change" if item.unknown_expected else "changed since the run (by you or another run)")
                out.conflicts.append(_conflict(item, now.version, why))
        _check_sources(out)
        _check_folders(out, view, force)
    return out


def _check_sources(out: Plan) -> None:
    """A file can only be put back from bytes that still exist (a pruned snapshot or copy has none)."""
    for step in list(out.steps):
        t = step.item.target
        if step.writes and t.version is not None and t.version.type == "file":
            got = open_file(t.root, t.rel) if t.root is not None else None
            if got is None:
                out.steps.remove(step)
                out.conflicts.append(_conflict(step.item, step.now, "its bytes are gone (the snapshot or the "
                                                                    "shadow copy was pruned or damaged)"))
            else:
                os.close(got[0])


def _check_folders(out: Plan, view: _View, force: bool) -> None:
    """Drop steps that would remove a folder holding strangers, or write below a folder that is not there."""
    def refuse(step: Step, why: str) -> None:
        out.steps.remove(step)
        (out.kept if force else out.conflicts).append(_conflict(step.item, step.now, why))

    removing = {s.item.rel: s for s in out.steps if s.removes}
    for rel in sorted(removing, key=_depth, reverse=True):
        step = removing[rel]
        if step.now is not None and step.now.type == "dir":
            strangers = sorted(c for c in view.children(rel) if c not in removing)
            if strangers:
                del removing[rel]
                refuse(step, f"the folder holds {len(strangers)} entr{'y' if len(strangers) == 1 else 'ies'} "
                             f"the run did not make ({', '.join(shown(s) for s in strangers[:3])})")
    making = {s.item.rel for s in out.steps if s.writes and s.item.target.version is not None
              and s.item.target.version.type == "dir"}
    for step in sorted([s for s in out.steps if s.writes], key=lambda s: _depth(s.item.rel)):
        for up in _ancestors(step.item.rel):
            if up in making:
                continue
            loc, blocked = view.at(up)
            if blocked or loc.version is None or loc.version.type != "dir" or up in removing:
                making.discard(step.item.rel)
                refuse(step, f"its folder {shown(up)} is missing or no longer a real folder")
                break


def folder_fd(root: int, rel: str) -> int:
    """A descriptor of the real folder holding `rel` (OSError if a component is not one: never a symlink)."""
    fd = os.dup(root)
    for part in rel.split("/")[:-1]:
        try:
            sub = os.open(part, DIR_FLAGS, dir_fd=fd)
        finally:
            os.close(fd)
        fd = sub
    return fd
