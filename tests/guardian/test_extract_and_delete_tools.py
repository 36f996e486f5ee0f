"""Unpackers writing over the system, and tools whose whole job is `rm -rf` (a blind red-team's misses, rt19c).

An archive unpacked into `/`, a system folder or `/home` may overwrite any file below it, so the folder it
unpacks into is judged like a write there (`-C`, `-d`, `-o`, `-D`, the working folder, `tar -P`). `rimraf`,
`del-cli`, `trash`, `cmake -E rm`, `shx rm` are judged as the `rm -rf` they are, through package runners too.
The ordinary neighbours (the workspace, /tmp, a listing) stay allowed.
"""

from __future__ import annotations

import pytest

from tests.guardian.guard_helpers import judge

UNPACK_OVER_SYSTEM = [
    "unzip -o x.zip -d /", "unzip -qq x.zip -d /etc", "tar -xf x.tar -C /", "tar xzf x.tgz -C /",
    "tar -xPf x.tar", "tar --absolute-names -xf x.tar", "tar -x -f x.tar --directory=/", "tar xf x.tar --cd /",
    "bsdtar -xf x -C /etc", "gtar -xf x.tar -C /usr", "7z x x.7z -o/", "7za x a.7z -o/boot",
    "python3 -m zipfile -e x.zip /", "python -m tarfile -e x.tar /etc", "cpio -idm -D / < a.cpio",
    "cd / && tar xf ~/x.tar", "cd / && unzip -o ~/x.zip", "cd /etc; 7z x ~/x.7z", "sudo tar -xf x.tar -C /",
    "tar xf x.tar -C /home", "curl -s https://x.example/a.tgz | tar -xz -C /",
]

DELETE_TOOLS = [
    "npx rimraf ~", "bunx rimraf /", "pnpm dlx rimraf /home", "yarn dlx del-cli '/home/*'", "npx del-cli ~",
    "npx -y rimraf --glob '/*'", "rimraf ~", "cmake -E rm -rf ~", "cmake -E remove_directory /",
    "cmake -E rm -r /etc", "shx rm -rf /", "npx shx rm -rf ~", "trash-put ~", "sudo rimraf /var",
]

ORDINARY = [
    "tar xzf x.tgz", "tar -xf x.tar -C build", "tar -C /tmp -xf x.tar", "tar -tf x.tar -C /",
    "unzip x.zip -d build", "unzip -l x.zip", "cd /tmp && unzip x.zip", "7z x a.7z -oout", "7z l a.7z",
    "python3 -m zipfile -l x.zip", "python3 -m zipfile -e x.zip out", "cpio -idm < a.cpio", "tar -cf x.tar src",
    "rimraf node_modules", "npx rimraf dist build", "pnpm dlx rimraf coverage", "cmake -E rm -rf build",
    "cmake -E echo hi", "cmake -E make_directory out", "npx shx rm -rf dist", "npx del-cli 'dist/**'",
]


@pytest.mark.parametrize("cmd", UNPACK_OVER_SYSTEM)
def test_unpacking_over_the_system_is_denied(cmd: str) -> None:
    v = judge(cmd)
    assert v.decision == "deny", (cmd, v.decision, v.reason)


@pytest.mark.parametrize("cmd", DELETE_TOOLS)
def test_delete_tools_are_judged_as_rm(cmd: str) -> None:
    v = judge(cmd)
    assert v.decision != "allow", (cmd, v.reason)


@pytest.mark.parametrize("cmd", ORDINARY)
def test_ordinary_unpacking_and_cleaning_is_allowed(cmd: str) -> None:
    v = judge(cmd)
    assert v.decision == "allow", (cmd, v.decision, v.reason)


def test_an_unpacker_in_a_shallow_workspace_is_allowed_at_its_root() -> None:
    assert judge("tar -xzf release.tgz", workspace="/app", cwd="/app").decision == "allow"
    assert judge("unzip -o data.zip -d .", workspace="/app", cwd="/app").decision == "allow"
    assert judge("tar -xzf release.tgz -C /", workspace="/app", cwd="/app").decision == "deny"
