"""Which project a workspace belongs to, so memory can prefer its own lessons.

Parts: `project_of(workspace)`: the workspace's git remote (origin first),
normalised so the https and ssh forms of one repository agree and without
credentials, e.g. `github.com/owner/repo`; else `local:<folder>-<digest>`
(common.projectid: no absolute path goes into memory files).

The workspace is the model's: `.git/config` is read by file descriptor,
never through a symlink, only when it is a regular file, at most 64 KiB;
git itself is never run on it (its config can name programs to execute).
"""

from __future__ import annotations

import configparser
import os
import re
import stat
from pathlib import Path

from tether.common.projectid import local_project

MAX_CONFIG_BYTES = 64 * 1024
MAX_PROJECT_CHARS = 300
_SCP = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>[^/].*)$")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://(?:[^@/]*@)?(?P<host>[^/:]+)(?::\d+)?/(?P<path>.*)$", re.I)


def _read_git_config(workspace: Path) -> str:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    fds: list[int] = []
    try:
        fds.append(os.open(workspace, flags | os.O_DIRECTORY))
        fds.append(os.open(".git", flags | os.O_DIRECTORY, dir_fd=fds[-1]))
        fds.append(os.open("config", flags | os.O_NONBLOCK, dir_fd=fds[-1]))
        if not stat.S_ISREG(os.fstat(fds[-1]).st_mode):
            return ""
        return os.read(fds[-1], MAX_CONFIG_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""  # no repository, a symlink, a .git file (worktree): the path identifies it
    finally:
        for fd in reversed(fds):
            os.close(fd)


def normalize_remote(url: str) -> str:
    """`host/owner/repo` of a remote URL (https, ssh or scp-like); credentials and `.git` dropped."""
    url = url.strip()
    m = _URL.match(url) or _SCP.match(url)
    if m is None:
        return url[:MAX_PROJECT_CHARS]
    path = m.group("path").strip("/").removesuffix(".git")
    return f"{m.group('host').lower()}/{path}"[:MAX_PROJECT_CHARS]


def _remote(text: str) -> str:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return ""
    remotes = [s for s in parser.sections() if s.startswith("remote ")]
    remotes.sort(key=lambda s: s != 'remote "origin"')
    for section in remotes:
        url = parser.get(section, "url", fallback="").strip()
        if url:
            return normalize_remote(url)
    return ""


def project_of(workspace: Path) -> str:
    """The project identity of a workspace: its git remote, else `local:` and its folder's name and digest."""
    return _remote(_read_git_config(workspace)) or local_project(str(workspace.resolve()))[:MAX_PROJECT_CHARS]
