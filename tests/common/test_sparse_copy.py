"""copy_sparse: a copy holds what the original holds (holes stay holes), byte for byte the same."""

from __future__ import annotations

import os
import shutil

from tether.common.sparse_copy import copy_sparse

MB = 1 << 20


def _used(path) -> int:
    return os.stat(path).st_blocks * 512


def test_a_mostly_empty_file_copies_as_its_data_not_its_size(tmp_path):
    src = tmp_path / "segment.dat"
    with open(src, "wb") as fh:  # a 64 MB file holding three small extents, like a preallocated index segment
        for at, data in ((0, b"head" * 1024), (20 * MB, os.urandom(300_000)), (64 * MB - 5, b"tail!")):
            fh.seek(at)
            fh.write(data)
    os.utime(src, (1_000_000_000, 1_000_000_000))
    out = tmp_path / "copy.dat"
    assert copy_sparse(src, out) == str(out)
    assert out.read_bytes() == src.read_bytes() and out.stat().st_size == 64 * MB
    assert _used(out) <= _used(src) + MB < 4 * MB  # the holes stayed holes
    assert out.stat().st_mtime == 1_000_000_000 and out.stat().st_mode == src.stat().st_mode


def test_full_empty_and_hole_ended_files_and_a_tree_copy(tmp_path):
    tree = tmp_path / "memory"
    (tree / "collection" / "0").mkdir(parents=True)
    (tree / "lesson.md").write_text("# a lesson\n")
    (tree / "empty").write_bytes(b"")
    with open(tree / "collection" / "0" / "hole-at-end", "wb") as fh:
        fh.write(b"x" * 5000)
        fh.truncate(8 * MB)
    (tree / "link").symlink_to("lesson.md")
    copy = tmp_path / "copy"
    shutil.copytree(tree, copy, symlinks=True, copy_function=copy_sparse)
    for name in ("lesson.md", "empty", "collection/0/hole-at-end"):
        assert (copy / name).read_bytes() == (tree / name).read_bytes(), name
    assert (copy / "link").is_symlink() and os.readlink(copy / "link") == "lesson.md"
    assert _used(copy / "collection" / "0" / "hole-at-end") < MB
