"""write_atomic: the replace is atomic either way; `durable=False` only skips the fsyncs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tether.common import atomic


@pytest.mark.parametrize(("durable", "syncs"), [(True, 2), (False, 0)])
def test_write_atomic_replaces_whole_and_syncs_only_when_durable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 durable: bool, syncs: int) -> None:
    target = tmp_path / "state" / "f.json"
    atomic.write_atomic(target, "old")
    calls: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd))[1])
    atomic.write_atomic(target, "new" * 1000, durable=durable)
    assert target.read_text() == "new" * 1000
    assert len(calls) == syncs  # the file and its folder, or neither
    assert [p.name for p in target.parent.iterdir()] == ["f.json"]  # no temp file left
    assert target.stat().st_mode & 0o777 == 0o600
