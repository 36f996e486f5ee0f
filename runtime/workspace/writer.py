"""Carry out a merge plan (runtime.workspace.merge) on the person's folder, backing up first.

Parts: `Done` (what changed, and where the backup is) and `carry_out()`.

Order: every entry a step overwrites or removes is first copied into the
backup folder (`<backup>/files/<path>`, an index beside it); then removals,
deepest first; then writes, parents first, each file written under a
temporary name and renamed over its place (a reader never sees half a
file); then folder modes, deepest first. Each path is looked at again just
before it is touched: if it changed since the plan, the work stops there
with the reason, and the backup holds everything touched so far. As root,
new entries get the owner of the entry they replace, or of their folder.
A file that replaces a file keeps that file's `user.*` extended attributes
where the file system has them (best effort; never a reason to fail).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import stat
from pathlib import Path

from pydantic import BaseModel, Field

from tether.common.atomic import write_atomic
from tether.common.errors import TetherError
from tether.common.snapshot import clone_fd, to_text
from tether.common.walk import Deadline, Folders, open_regular, shown
from tether.runtime.workspace.merge import Plan, Step, folder_fd
from tether.runtime.workspace.versions import Located, Version, describe, look, open_file, opened

log = logging.getLogger(__name__)

CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class MergeError(TetherError, OSError):
    """The folder could not be changed as planned; what was touched is in the backup."""


class Done(BaseModel):
    """What a carried-out plan changed (shown names; folders end in `/`)."""

    written: list[str] = Field(default_factory=list)
    """Put in place: created or replaced."""
    removed: list[str] = Field(default_factory=list)
    backup: Path | None = None
    """Where what was overwritten or removed is kept (None when nothing was)."""


def _name(rel: str) -> str:
    return rel.rpartition("/")[2]


def _shown(rel: str, v: Version | None) -> str:
    return shown(rel) + ("/" if v is not None and v.type == "dir" else "")


def carry_out(plan: Plan, backup: Path, deadline: Deadline | None = None) -> Done:
    """Do the plan's steps on `plan.workspace`; raise MergeError naming where it stopped."""
    done = Done()
    steps = plan.steps
    with opened(plan.workspace) as root:
        try:
            _backup(root, [s for s in steps if s.now is not None and s.now.type != "dir"], backup, done, deadline)
            for step in sorted([s for s in steps if s.removes], key=lambda s: s.item.rel.count("/"), reverse=True):
                _recheck(root, step)
                _remove(root, step.item.rel, step.now)
                done.removed.append(_shown(step.item.rel, step.now))
            for step in sorted([s for s in steps if s.writes], key=lambda s: s.item.rel.count("/")):
                if not step.removes:
                    _recheck(root, step)
                _write(root, step)
                done.written.append(_shown(step.item.rel, step.item.target.version))
            for step in sorted(steps, key=lambda s: s.item.rel.count("/"), reverse=True):
                t = step.item.target.version
                if t is not None and t.type == "dir":
                    _chmod_dir(root, step.item.rel, t.mode)
                    if step.now is not None and step.now.type == "dir" and step.now.mode != t.mode:
                        done.written.append(_shown(step.item.rel, t))
        except OSError as e:
            where = f"; what it overwrote so far is in {done.backup}" if done.backup else ""
            msg = f"stopped after {len(done.written) + len(done.removed)} change(s): {e}{where}"
            raise MergeError(msg) from e
    return done


def _recheck(root: int, step: Step) -> None:
    """The path still holds what the plan saw (the person may be working while this runs)."""
    now, blocked = look(root, step.item.rel)
    seen = step.now
    same = (not blocked and (now is None) == (seen is None)
            and (now is None or seen is None or (now.type, now.mode, now.target, now.sig)
                 == (seen.type, seen.mode, seen.target, seen.sig)))
    if not same:
        msg = f"{shown(step.item.rel)} changed while this ran (now {describe(now)}); run the command again"
        raise OSError(msg)


def _backup(root: int, steps: list[Step], backup: Path, done: Done, deadline: Deadline | None) -> None:
    if not steps:
        return
    (backup / "files").mkdir(parents=True, exist_ok=True)
    done.backup = backup
    index: dict[str, str] = {}
    with opened(backup / "files") as dst_root, Folders(dst_root, create=True) as dst:
        for step in sorted(steps, key=lambda s: s.item.rel):
            rel, now = step.item.rel, step.now
            assert now is not None
            parent = folder_fd(root, rel)
            try:
                into = dst.parent(rel)
                if now.type == "file":
                    got = open_regular(parent, _name(rel))
                    if got is None:
                        continue
                    try:
                        out = os.open(_name(rel), CREATE, 0o600, dir_fd=into)
                        try:
                            clone_fd(got[0], out, got[1].st_size, True, deadline)
                            os.fchmod(out, now.mode)
                        finally:
                            os.close(out)
                    finally:
                        os.close(got[0])
                elif now.type == "symlink":
                    os.symlink(os.fsencode(now.target or ""), os.fsencode(_name(rel)), dir_fd=into)
                elif now.type == "fifo":
                    os.mkfifo(_name(rel), 0o600, dir_fd=into)
            finally:
                os.close(parent)
            index[to_text(rel)] = describe(now)
    write_atomic(backup / "index.json", json.dumps(index, indent=1))


def _owner(parent: int, name: str) -> tuple[int, int] | None:
    """Who a new entry should belong to (only root can give it away)."""
    if os.geteuid() != 0:
        return None
    try:
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        st = os.fstat(parent)
    return st.st_uid, st.st_gid


def _remove(root: int, rel: str, now: Version | None) -> None:
    parent = folder_fd(root, rel)
    try:
        with _writable(parent):
            if now is not None and now.type == "dir":
                os.rmdir(_name(rel), dir_fd=parent)
            else:
                os.unlink(_name(rel), dir_fd=parent)
    finally:
        os.close(parent)


def _write(root: int, step: Step) -> None:
    t, rel = step.item.target, step.item.rel
    v = t.version
    assert v is not None
    parent = folder_fd(root, rel)
    try:
        owner = _owner(parent, _name(rel))
        with _writable(parent):
            if v.type == "dir":
                os.mkdir(_name(rel), 0o700, dir_fd=parent)
                if owner:
                    os.chown(_name(rel), *owner, dir_fd=parent, follow_symlinks=False)
                return
            tmp = _made(parent, t)
            if v.type == "file" and step.now is not None and step.now.type == "file":
                _keep_xattrs(parent, _name(rel), tmp)
            if owner:
                os.chown(tmp, *owner, dir_fd=parent, follow_symlinks=False)
            os.rename(tmp, os.fsencode(_name(rel)), src_dir_fd=parent, dst_dir_fd=parent)
    finally:
        os.close(parent)


def _keep_xattrs(parent: int, old: str, new: str) -> None:
    """Give the new file the `user.*` extended attributes of the file it replaces (best effort: where the file
    system has them; the write never fails for it)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        src = os.open(old, flags, dir_fd=parent)
    except OSError:
        return
    try:
        names = [n for n in os.listxattr(src) if n.startswith("user.")] if stat.S_ISREG(os.fstat(src).st_mode) else []
        if not names:
            return
        dst = os.open(new, flags, dir_fd=parent)
        try:
            for name in names:
                os.setxattr(dst, name, os.getxattr(src, name))
        finally:
            os.close(dst)
    except OSError as e:  # no xattrs on this file system, or a quota: the file's bytes are what matters
        log.info("extended attributes of %s not kept: %s", old, e)
    finally:
        os.close(src)


def _made(parent: int, t: Located) -> str:
    """Make the target under a fresh temporary name beside its place (never one that exists); that name."""
    v = t.version
    assert v is not None
    for _ in range(100):
        tmp = f".tether-{secrets.token_hex(6)}.tmp"
        try:
            if v.type == "symlink":
                os.symlink(os.fsencode(v.target or ""), tmp, dir_fd=parent)
            elif v.type == "fifo":
                os.mkfifo(tmp, 0o600, dir_fd=parent)
                os.chmod(tmp, v.mode, dir_fd=parent)
            else:
                _write_file(parent, tmp, t)
        except FileExistsError:
            continue
        return tmp
    msg = "no free temporary name in the folder"
    raise FileExistsError(msg)


def _write_file(parent: int, tmp: str, t: Located) -> None:
    v = t.version
    assert v is not None and t.root is not None
    got = open_file(t.root, t.rel)
    if got is None:
        msg = f"the bytes of {shown(t.rel)} are gone from {t.root}"
        raise FileNotFoundError(msg)
    src, st = got
    try:
        out = os.open(tmp, CREATE, 0o600, dir_fd=parent)
        try:
            clone_fd(src, out, st.st_size, True)
            os.fchmod(out, v.mode)
            if v.mtime_ns is not None:
                os.utime(out, ns=(v.mtime_ns, v.mtime_ns))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=parent)  # ours, made just above: never left half-written
            raise
        finally:
            os.close(out)
    finally:
        os.close(src)


def _chmod_dir(root: int, rel: str, mode: int) -> None:
    fd = folder_fd(root, rel + "/x")  # the folder itself, reached without following a link
    try:
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


@contextlib.contextmanager
def _writable(folder: int):  # noqa: ANN202 (a context manager)
    """Let the owner write `folder` while inside (a read-only folder of the person's), then put its mode back."""
    mode = stat.S_IMODE(os.fstat(folder).st_mode)
    if mode & 0o300 == 0o300 or os.geteuid() == 0:
        yield
        return
    os.fchmod(folder, mode | 0o300)
    try:
        yield
    finally:
        os.fchmod(folder, mode)
