"""Choosing the sandbox user and validating host folders (no engine needed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from tether.common.errors import ConfigError
from tether.sandbox.config import DockerSandboxConfig
from tether.sandbox.workspace import check_folder, sandbox_user

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to create folders of other owners")


def test_config_refuses_root_user() -> None:
    for bad in ("0:0", "0", "root", "1000:x"):
        with pytest.raises(ValidationError):
            DockerSandboxConfig(user=bad)
    assert DockerSandboxConfig(user="1234:1234").user == "1234:1234"


def test_check_folder_rejects_missing_and_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        check_folder(tmp_path / "nope", "workspace", writable=True)
    (tmp_path / "f").write_text("x")
    with pytest.raises(ConfigError, match="not a folder"):
        check_folder(tmp_path / "f", "workspace", writable=True)


@as_root
def test_auto_user_is_the_workspace_owner(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    os.chown(ws, 1234, 4321)
    assert sandbox_user("auto", ws) == ("1234:4321", None)


@as_root
def test_root_owned_workspace_is_lent_to_uid_1000_and_given_back(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "sub" / "f").write_text("x")
    (ws / "theirs").write_text("x")
    os.chown(ws / "theirs", 1000, 1000)
    user, handover = sandbox_user("auto", ws)
    assert user == "1000:1000" and handover is not None
    handover.give()
    assert {p.stat().st_uid for p in (ws, ws / "sub", ws / "sub" / "f")} == {1000}
    (ws / "new").write_text("made by the sandbox")
    os.chown(ws / "new", 1000, 1000)
    handover.take_back()
    owners = {p.name: p.stat().st_uid for p in (ws, ws / "sub", ws / "sub" / "f", ws / "new", ws / "theirs")}
    assert owners == {"ws": 0, "sub": 0, "f": 0, "new": 0, "theirs": 1000}


def test_world_writable_root_folder_needs_no_handover(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    ws.chmod(0o1777)
    if ws.stat().st_uid == 0:
        assert sandbox_user("auto", ws) == ("1000:1000", None)


@as_root
def test_explicit_user_that_cannot_write_is_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir(mode=0o755)
    with pytest.raises(ConfigError, match="chown -R 2000:2000"):
        sandbox_user("2000:2000", ws)


@as_root
def test_system_folders_are_never_handed_over() -> None:
    with pytest.raises(ConfigError, match="will not lend"):
        sandbox_user("auto", Path("/etc"))
    with pytest.raises(ConfigError, match="will not lend"):
        sandbox_user("auto", Path("/root"))


@as_root
def test_lending_keeps_setuid_and_setgid_bits(tmp_path: Path) -> None:
    """chown clears S_ISUID/S_ISGID; a lent workspace must get its modes back unchanged."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "suid").write_text("#!/bin/sh\n")
    (ws / "suid").chmod(0o4755)
    (ws / "sgid").write_text("#!/bin/sh\n")
    (ws / "sgid").chmod(0o2755)
    _, handover = sandbox_user("auto", ws)
    assert handover is not None
    handover.give()
    handover.take_back()
    assert oct((ws / "suid").stat().st_mode & 0o7777) == oct(0o4755)
    assert oct((ws / "sgid").stat().st_mode & 0o7777) == oct(0o2755)
    assert (ws / "suid").stat().st_uid == 0 and (ws / "sgid").stat().st_uid == 0


@as_root
def test_lending_never_hands_over_a_file_hardlinked_from_outside(tmp_path: Path) -> None:
    """A hardlink in the workspace to a host file outside it must not lend that host file."""
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"
    outside.write_text("host secret\n")
    outside.chmod(0o600)
    os.link(outside, ws / "link")
    (ws / "a").write_text("x")
    os.link(ws / "a", ws / "b")  # both links inside: lending it is fine
    _, handover = sandbox_user("auto", ws)
    assert handover is not None
    handover.give()
    try:
        assert outside.stat().st_uid == 0, "a host file outside the workspace was chowned to the sandbox user"
        assert (ws / "a").stat().st_uid == 1000
    finally:
        handover.take_back()
    assert outside.stat().st_uid == 0 and (ws / "a").stat().st_uid == 0


@as_root
def test_sandbox_cannot_write_a_host_file_through_a_hardlink(tmp_path: Path, make_sandbox) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"
    outside.write_text("host secret\n")
    outside.chmod(0o644)
    os.link(outside, ws / "link")
    sandbox = make_sandbox(ws)
    result = sandbox.exec("echo pwned > link")
    sandbox.close()
    assert result.exit_code != 0
    assert outside.read_text() == "host secret\n"
    assert outside.stat().st_uid == 0
