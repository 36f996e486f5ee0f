"""Tests taken out of git's index while left on disk (`git rm --cached tests/test_x.sh`).

A runner that lists its tests with `git ls-files` no longer runs such a test,
yet the file is byte-identical, so the manifest shows nothing. The index
file is read here as data (versions 2-4, bounded): no git program runs, so
no hook, fsmonitor or config the run wrote can act. A test path tracked in
the pre-run snapshot's index and missing from the final one, while the file
is still in the workspace, is a test deleted as far as git is concerned.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from pathlib import Path

from tether.common.walk import read_rel
from tether.gate.rerun import is_test_path

INDEX_CAP = 64 << 20
MAX_ENTRIES = 500_000


def _varint(data: bytes, i: int) -> tuple[int, int]:
    """git's offset varint (index v4 path prefixes)."""
    c = data[i]
    i += 1
    value = c & 0x7F
    while c & 0x80:
        c = data[i]
        i += 1
        value = ((value + 1) << 7) | (c & 0x7F)
    return value, i


def index_paths(data: bytes) -> set[str] | None:
    """The paths an index file lists; None when it is not an index the gate can read (then nothing is claimed)."""
    if len(data) < 12 or data[:4] != b"DIRC":
        return None
    version, count = struct.unpack(">II", data[4:12])
    if version not in (2, 3, 4) or count > MAX_ENTRIES:
        return None
    paths: set[str] = set()
    i, prev = 12, b""
    try:
        for _ in range(count):
            start = i
            flags = struct.unpack(">H", data[i + 60:i + 62])[0]
            i += 62
            if version >= 3 and flags & 0x4000:
                i += 2
            if version == 4:
                strip, i = _varint(data, i)
                end = data.index(b"\x00", i)
                name = prev[:len(prev) - strip] + data[i:end]
                i = end + 1
            else:
                end = data.index(b"\x00", i)
                name = data[i:end]
                i = start + ((end - start + 8) & ~7)
            prev = name
            paths.add(name.decode("utf-8", "surrogateescape"))
    except (ValueError, IndexError, struct.error):
        return None
    return paths


def untracked_tests(snapshot: Path | None, workspace: Path, present: Iterable[str]) -> list[str]:
    """Review lines for test files the pre-run index tracked that the final index does not, still on disk."""
    if snapshot is None:
        return []
    before_data = read_rel(snapshot, ".git/index", INDEX_CAP)
    if not before_data:
        return []
    before = index_paths(before_data)
    if before is None:
        return []
    after_data = read_rel(workspace, ".git/index", INDEX_CAP)
    after = index_paths(after_data) if after_data else set()
    if after is None:
        return ["tampering: the run left .git/index unreadable, so which tests git still lists is unknown"]
    on_disk = set(present)
    return [f"test {p} removed from git's index by the run (still on disk; `git ls-files` no longer lists it)"
            for p in sorted(before - after) if is_test_path(p) and p in on_disk]
