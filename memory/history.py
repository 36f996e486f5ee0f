"""The memory folder under git: the history of lessons and rules, and a commit per run.

Parts: `is_repository`, `memory_log` (from `git log` when the folder is in a
git work tree, else from the lessons' revision histories and the rules'
records), `commit_memory` (`memory.auto_commit`: one commit of the folder's
changes, the run id in the message).

Git runs only on the memory folder, never on a workspace; a failure is logged
and never fails a run. The folder's `.gitignore` (written by the store) keeps
the index, the lock and the line record out, so only markdown is committed.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

from tether.memory.store import MemoryStore

log = logging.getLogger(__name__)
GIT_TIMEOUT_S = 30
IDENTITY = ("-c", "user.name=tether", "-c", "user.email=tether@localhost")
"""The author of automatic commits where git has no identity configured."""


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=GIT_TIMEOUT_S,
                          env=env, check=False)


def is_repository(root: Path) -> bool:
    """Whether the folder is inside a git work tree (and git is installed)."""
    if shutil.which("git") is None:
        return False
    try:
        done = _git(root, "rev-parse", "--is-inside-work-tree")
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and done.stdout.strip() == "true"


def _git_log(root: Path, limit: int) -> list[dict[str, Any]]:
    sep = "\x1f"
    done = _git(root, "log", f"-n{limit}", f"--format=%x1e%H{sep}%aI{sep}%an{sep}%s", "--name-status",
                "--relative", "--", ".")
    if done.returncode != 0:
        return []  # a repository without commits yet
    out = []
    for chunk in done.stdout.split("\x1e")[1:]:
        head, *rest = chunk.strip("\n").split("\n")
        commit, at, author, subject = head.split(sep, 3)
        files = [line.split("\t")[-1] for line in rest if line.strip()]
        out.append({"at": at, "commit": commit[:12], "author": author, "event": subject,
                    "items": sorted({Path(f).stem for f in files if f.startswith(("lessons/", "rules/"))}),
                    "files": files})
    return out


def _record_log(store: MemoryStore, limit: int) -> list[dict[str, Any]]:
    events: list[tuple[datetime, dict[str, Any]]] = []
    for x in store.lessons():
        made = "written by a person" if x.author == "person" else f"learnt from run {x.source_run}"
        events.append((x.created, {"item": x.id, "kind": "lesson", "run_id": x.source_run, "event": made}))
        for h in x.history:
            what = f"{h.verdict or 'unreadable'} {h.status}" + (f" ({h.reason})" if h.reason else "")
            events.append((h.at, {"item": x.id, "kind": "lesson", "run_id": h.run_id, "event": what}))
    for r in store.rules():
        runs = ", ".join(r.source_runs)
        events.append((r.first_seen, {"item": r.id, "kind": "rule", "run_id": r.source_runs[-1] if r.source_runs
                                      else "", "event": f"learnt from runs {runs}" if runs else "learnt"}))
        for a in r.applied:
            if a.at is not None:
                events.append((a.at, {"item": r.id, "kind": "rule", "run_id": a.run, "event": f"applied: {a.outcome}"}))
        if r.edited is not None:
            events.append((r.edited, {"item": r.id, "kind": "rule", "run_id": "", "event": "edited by a person"}))
    events.sort(key=lambda e: e[0], reverse=True)
    return [{"at": at.isoformat(), **e} for at, e in events[:limit]]


def memory_log(store: MemoryStore, limit: int = 50) -> dict[str, Any]:
    """The newest `limit` entries: commits when the folder is in git, else the items' own records."""
    if is_repository(store.root):
        return {"source": "git", "root": str(store.root), "entries": _git_log(store.root, limit)}
    with store.session():
        entries = _record_log(store, limit)
    return {"source": "histories", "root": str(store.root), "entries": entries}


def commit_memory(root: Path, message: str) -> str | None:
    """Commit the folder's changes (a repository is made when it is in none); the commit id, or None.

    Only paths under the folder are staged and committed, so a memory folder
    inside a larger repository commits nothing else of it.
    """
    if shutil.which("git") is None:
        log.warning("memory.auto_commit is on but git is not installed; nothing committed")
        return None
    try:
        if not is_repository(root):
            done = _git(root, "init", "-q")
            if done.returncode != 0:
                log.warning("memory.auto_commit: git init failed in %s: %s", root, done.stderr.strip())
                return None
        _git(root, "add", "-A", "--", ".")
        if _git(root, "diff", "--cached", "--quiet", "--", ".").returncode == 0:
            return None  # nothing changed
        identity = () if _git(root, "config", "user.email").stdout.strip() else IDENTITY
        done = _git(root, *identity, "commit", "-q", "-m", message, "--", ".")
        if done.returncode != 0:
            log.warning("memory.auto_commit: git commit failed in %s: %s", root, done.stderr.strip())
            return None
        return _git(root, "rev-parse", "--short=12", "HEAD").stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired) as e:
        log.warning("memory.auto_commit: git failed in %s: %s", root, e)
        return None
