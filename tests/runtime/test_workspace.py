"""Workspace manifests see content, mode and symlink changes; .git is ignored."""

import os

from runtime.workspace import diff, manifest


def test_diff_reports_added_modified_deleted(tmp_path):
    (tmp_path / "keep.txt").write_text("same")
    (tmp_path / "edit.txt").write_text("old")
    (tmp_path / "gone.txt").write_text("bye")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref")
    before = manifest(tmp_path)
    assert ".git/HEAD" not in before

    (tmp_path / "edit.txt").write_text("new")
    (tmp_path / "gone.txt").unlink()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "new.txt").write_text("hi")
    os.symlink("keep.txt", tmp_path / "link")
    (tmp_path / ".git" / "HEAD").write_text("changed")
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
