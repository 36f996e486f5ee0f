"""Workspace manifests see content, mode and symlink changes; .git is ignored."""

import os

from tether.common.manifest import diff, manifest


def test_diff_reports_added_modified_deleted(tmp_path):
    (tmp_path / "keep.txt").write_text("same")
    (tmp_path / "edit.txt").write_text("old")
    (tmp_path / "gone.txt").write_text("bye")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "index").write_text("ref")
    before = manifest(tmp_path)
    assert ".git/index" not in before  # the index is data; HEAD and refs are kept (host-code check)

    (tmp_path / "edit.txt").write_text("new")
    (tmp_path / "gone.txt").unlink()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "new.txt").write_text("hi")
    os.symlink("keep.txt", tmp_path / "link")
    (tmp_path / ".git" / "index").write_text("changed")
    d = diff(before, manifest(tmp_path))

    assert d.added == ["link", "sub/new.txt"]
    assert d.modified == ["edit.txt"]
    assert d.deleted == ["gone.txt"]
    assert not d.empty


def test_mode_change_is_a_modification(tmp_path):
    f = tmp_path / "run.sh"
    f.write_text("echo hi")
    before = manifest(tmp_path)
    f.chmod(0o755)
    assert diff(before, manifest(tmp_path)).modified == ["run.sh"]
    assert diff(before, before).empty


def test_cache_reuses_unchanged_files_and_sees_every_change(tmp_path, monkeypatch):
    import time

    import tether.common.manifest as ws

    for i in range(5):
        (tmp_path / f"f{i}.txt").write_text(f"content {i}")
    cache = ws.ManifestCache()
    first = manifest(tmp_path, cache=cache)
    assert first == manifest(tmp_path)
    assert cache.hashed == 5
    # files written just now are racy: hashed again, so a same-size rewrite in the same tick is seen
    (tmp_path / "f0.txt").write_text("CONTENT 0")
    assert diff(first, manifest(tmp_path, cache=cache)).modified == ["f0.txt"]
    assert cache.hashed == 10

    # seen from later on, nothing is racy: unchanged files are not read again
    later = time.time_ns() + 10 * ws.RACY_NS
    monkeypatch.setattr(ws.time, "time_ns", lambda: later)
    base = manifest(tmp_path, cache=cache)
    assert manifest(tmp_path, cache=cache) == base == manifest(tmp_path)
    assert cache.hashed == 15
    (tmp_path / "f1.txt").write_text("changed, longer")
    (tmp_path / "f2.txt").chmod(0o700)
    (tmp_path / "f3.txt").unlink()
    (tmp_path / "f5.txt").write_text("new")
    after = manifest(tmp_path, cache=cache)
    assert after == manifest(tmp_path)
    assert cache.hashed == 18  # f1, f2 (mode: its ctime moved) and f5
    d = diff(base, after)
    assert (d.added, d.modified, d.deleted) == (["f5.txt"], ["f1.txt", "f2.txt"], ["f3.txt"])
