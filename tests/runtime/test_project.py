"""Project identity of a workspace (memory scopes, issue 13)."""

from __future__ import annotations

import os

from tether.common.projectid import local_project
from tether.runtime.project import normalize_remote, project_of


def test_project_identity_from_git_remote_or_path(tmp_path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".git" / "config").write_text('[core]\n\tbare = false\n[remote "origin"]\n\turl = https://user:tok@GitHub.com/acme/app.git\n')
    assert project_of(ws) == "github.com/acme/app"
    assert normalize_remote("git@github.com:acme/app.git") == "github.com/acme/app"
    plain = tmp_path / "plain"
    plain.mkdir()
    assert project_of(plain) == local_project(str(plain.resolve())) and project_of(plain).startswith("local:plain-")
    # A .git that is a symlink (the model's workspace) is not followed.
    linked = tmp_path / "linked"
    linked.mkdir()
    os.symlink(ws / ".git", linked / ".git")
    assert project_of(linked) == local_project(str(linked.resolve()))


def test_a_fifo_config_is_not_read(tmp_path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    os.mkfifo(ws / ".git" / "config")
    assert project_of(ws) == local_project(str(ws.resolve()))  # returned at once: a FIFO would block a plain open
