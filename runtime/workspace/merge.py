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
from tether.runtime.workspace.versions import FolderChain, Located, Version, describe, matches, open_file, opened


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
    """The folder now, or as it will be after earlier plans (`overlay`: rel -> version and its tree).

    Linear in the number and depth of the paths asked for (a 2000-deep tree is 2000 paths of up to 2000
    components): folders come from one `FolderChain`, and the overlay is indexed once.
    """

    def __init__(self, workspace: Path, folders: FolderChain, overlay: dict[str, Located] | None) -> None:
        self.workspace, self.folders, self.overlay = workspace, folders, overlay or {}
        self._blockers = {r for r, loc in self.overlay.items() if loc.version is not None and loc.version.type != "dir"}
        """Overlay paths that will hold something other than a folder: nothing below them exists."""
        self._blocker_lengths = {len(r) for r in self._blockers}
        self._gone = {r for r, loc in self.overlay.items() if loc.version is None}
        self._added: dict[str, set[str]] = {}
        for r, loc in self.overlay.items():
            if loc.version is not None:
                self._added.setdefault(r.rpartition("/")[0], set()).add(r)

    def _blocker_above(self, rel: str) -> str:
        """The shallowest overlay path above `rel` that is not a folder, or ""."""
        at = rel.find("/")
        while at != -1:  # only prefixes as long as some blocker are sliced: linear in the path's length
            if at in self._blocker_lengths and rel[:at] in self._blockers:
                return rel[:at]
            at = rel.find("/", at + 1)
        return ""

    def at(self, rel: str) -> tuple[Located, str]:
        if rel in self.overlay:
            return self.overlay[rel], ""
        if self._blockers and (up := self._blocker_above(rel)):
            return Located(None, None, rel), up
        version, blocked = self.folders.look(rel)
        return Located(version, self.workspace, rel), blocked

    def children(self, rel: str) -> set[str]:
        found: set[str] = set()
        folder, _ = self.folders.folder(rel)
        if folder is not None:
            with os.scandir(folder) as it:  # reads a duplicate: the chain's descriptor stays open
                found = {f"{rel}/{d.name}" for d in it}
        found -= self._gone
        found |= self._added.get(rel, set())
        return found


def plan(workspace: Path, items: list[Item], cap: int, *, force: bool = False,
         overlay: dict[str, Located] | None = None, deadline: Deadline | None = None) -> Plan:
    """Decide, for each item, nothing / a step / a conflict, against the folder now (or `overlay` over it)."""
    out = Plan(workspace=workspace)
    with opened(workspace) as root, FolderChain(root) as folders:
        view = _View(workspace, folders, overlay)
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
    real: set[str] = set()
    """Folders found real and kept: like a folder still being made, everything above one was checked already."""
    for step in sorted([s for s in out.steps if s.writes], key=lambda s: _depth(s.item.rel)):
        rel = step.item.rel
        below: list[str] = []  # the folders above rel up to the nearest one made or found real, deepest first
        at = rel.rfind("/")
        while at != -1:
            up = rel[:at]
            if up in making or up in real:
                break
            below.append(up)
            at = rel.rfind("/", 0, at)
        for up in reversed(below):  # shallowest first: the first bad one is the one named
            loc, blocked = view.at(up)
            if blocked or loc.version is None or loc.version.type != "dir" or up in removing:
                making.discard(rel)
                refuse(step, f"its folder {shown(up)} is missing or no longer a real folder")
                break
        else:
            real.update(below)


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
