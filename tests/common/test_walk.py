"""The fd-based workspace walk: hostile names, depths, file types and swaps mid-walk."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from tether.common.walk import (
    Deadline,
    WalkError,
    copy_sparse,
    hash_file,
    kind_of,
    open_regular,
    open_root,
    read_head,
    read_rel,
    remove_entry,
    shown,
    walk,
    walk_folders,
)


def _deep(root: Path, depth: int) -> None:
    """`depth` nested folders of 60-char names (far beyond PATH_MAX), a file at the bottom."""
    fd = os.open(root, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d" * 60, dir_fd=fd)
        sub = os.open("d" * 60, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = sub
    leaf = os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
    os.write(leaf, b"bottom")
    os.close(leaf)
    os.close(fd)


def test_a_2000_deep_tree_beyond_path_max_is_walked_and_removed(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    _deep(tmp_path / "t", 2000)
    entries = list((e.rel, e.kind) for e in walk(tmp_path / "t"))
    assert len(entries) == 2001
    assert entries[-1][1] == "file" and len(entries[-1][0]) > 4096
    assert read_rel(tmp_path / "t", entries[-1][0], 100) == b"bottom"
    fd = open_root(tmp_path)
    try:
        assert len(remove_entry(fd, "t")) == 2002
    finally:
        os.close(fd)
    assert not (tmp_path / "t").exists()


def test_too_deep_fails_with_a_reason(tmp_path: Path) -> None:
    _deep(tmp_path, 30)
    with pytest.raises(WalkError, match="deeper than 10 levels"):
        list(walk(tmp_path, max_depth=10))


def test_non_utf8_names_round_trip_and_show_as_text(tmp_path: Path) -> None:
    raw = b"\xff\xfe bad"
    with open(os.path.join(os.fsencode(tmp_path), raw), "wb") as fh:
        fh.write(b"x")
    [entry] = list(walk(tmp_path))
    assert os.fsencode(entry.rel) == raw
    assert shown(entry.rel) == "\\xff\\xfe bad"
    assert shown(entry.rel).encode("utf-8")  # valid text for JSON and terminals
    assert read_rel(tmp_path, entry.rel, 10) == b"x"


def test_a_fifo_is_never_opened_for_reading(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    fd = open_root(tmp_path)
    try:
        assert open_regular(fd, "pipe") is None
        assert read_head(fd, "pipe", 10) is None
    finally:
        os.close(fd)
    # A writer waiting for a reader stays blocked: we never opened the FIFO's read end.
    opened = threading.Event()

    def writer() -> None:
        wfd = os.open(tmp_path / "pipe", os.O_WRONLY)
        opened.set()
        os.close(wfd)

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    list(walk(tmp_path))
    assert not opened.wait(0.3)
    os.close(os.open(tmp_path / "pipe", os.O_RDONLY | os.O_NONBLOCK))  # release the writer


def test_a_15_tib_sparse_file_is_hashed_and_copied_cheaply(tmp_path: Path) -> None:
    big = tmp_path / "big.img"
    with open(big, "wb") as fh:
        fh.truncate(15 << 40)
        fh.seek(5_000_000_000)
        fh.write(b"data in the middle")
    fd = open_root(tmp_path)
    start = time.monotonic()
    try:
        src, st = open_regular(fd, "big.img")
        first = hash_file(src, st, 1 << 20)
        dst = os.open("copy.img", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd)
        assert copy_sparse(src, dst, st.st_size) < 1 << 20
        os.close(dst)
        os.close(src)
        src, st2 = open_regular(fd, "copy.img")
        assert st2.st_size == st.st_size and st2.st_blocks * 512 < 1 << 20
        assert hash_file(src, st2, 1 << 20) == first
        os.close(src)
    finally:
        os.close(fd)
    assert time.monotonic() - start < 5


def test_hash_reads_at_most_the_cap_yet_sees_later_writes(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"a" * 4096 + b"b" * 4096)
    fd = open_root(tmp_path)
    try:
        src, st = open_regular(fd, "f")
        capped = hash_file(src, st, 4096)
        os.close(src)
        with open(f, "r+b") as fh:  # same size, change past the cap
            fh.seek(6000)
            fh.write(b"X")
        src, st = open_regular(fd, "f")
        assert hash_file(src, st, 4096) != capped
        os.close(src)
    finally:
        os.close(fd)


def test_a_folder_swapped_for_a_symlink_mid_walk_is_not_followed(tmp_path: Path) -> None:
    host = tmp_path / "host"
    host.mkdir()
    (host / "secret").write_text("host only")
    ws = tmp_path / "ws"
    for d in ("a", "b"):
        (ws / d).mkdir(parents=True)
        (ws / d / "f").write_text("ws")
    seen = []
    for entry in walk(ws):
        seen.append((entry.rel, entry.kind))
        if entry.rel == "a":  # b is listed already; swap it now
            os.rename(ws / "b", ws / "b.aside")
            os.symlink(host, ws / "b")
    assert ("b", "symlink") in seen
    assert all("secret" not in rel for rel, _ in seen)


def test_a_deadline_stops_the_pass_with_its_name(tmp_path: Path) -> None:
    for i in range(50):
        (tmp_path / f"f{i}").write_text("x")
    with pytest.raises(WalkError, match="manifest took longer than"):
        list(walk(tmp_path, deadline=Deadline(0.0, "manifest")))


def test_the_root_must_not_be_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "link")
    with pytest.raises(WalkError, match="not a symlink"):
        list(walk(tmp_path / "link"))


def test_remove_path_takes_a_tree_too_deep_for_shutil(tmp_path: Path) -> None:
    from tether.common.walk import remove_path

    (tmp_path / "t").mkdir()
    _deep(tmp_path / "t", 1500)
    with pytest.raises(RecursionError):  # why shutil.rmtree is not used on workspace-made trees
        import shutil

        shutil.rmtree(tmp_path / "t", ignore_errors=True)
    remove_path(tmp_path / "t")
    assert not (tmp_path / "t").exists()
    remove_path(tmp_path / "t")  # missing is fine


def _folder_walk(root: Path, **kw) -> list[tuple[str, str]]:
    """(rel, kind) of every entry `walk_folders` reports, folders included, as `walk` names them."""
    fd = open_root(root)
    out = []
    try:
        for folder in walk_folders(fd, **kw):
            if folder.st is not None and folder.rel:
                out.append((folder.rel, "dir"))
            prefix = f"{folder.rel}/" if folder.rel else ""
            out += [(prefix + name, kind_of(st)) for name, st in folder.files]
    finally:
        os.close(fd)
    return out


def test_the_folder_walk_sees_what_the_entry_walk_sees(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "f").write_text("x")
    (tmp_path / "a" / "g").write_text("y")
    os.symlink("/etc", tmp_path / "a" / "link")
    os.mkfifo(tmp_path / "fifo")
    with open(os.path.join(os.fsencode(tmp_path), b"\xff name"), "wb") as fh:
        fh.write(b"z")
    assert sorted(_folder_walk(tmp_path)) == sorted((e.rel, e.kind) for e in walk(tmp_path))
    _deep(tmp_path / "a" / "b", 2000)  # any depth, beyond PATH_MAX
    assert sorted(_folder_walk(tmp_path)) == sorted((e.rel, e.kind) for e in walk(tmp_path))
    assert len(_folder_walk(tmp_path)) == 2008
    with pytest.raises(WalkError, match="deeper than 10 levels"):
        _folder_walk(tmp_path, max_depth=10)
    with pytest.raises(WalkError, match="manifest took longer than"):
        _folder_walk(tmp_path, deadline=Deadline(0.0, "manifest"))


def test_a_folder_swapped_for_a_symlink_before_the_folder_walk_enters_it_is_reported_not_followed(
        tmp_path: Path) -> None:
    host = tmp_path / "host"
    host.mkdir()
    (host / "secret").write_text("host only")
    ws = tmp_path / "ws"
    for d in ("a", "b"):
        (ws / d).mkdir(parents=True)
        (ws / d / "f").write_text("ws")
    fd = open_root(ws)
    seen = []
    try:
        for folder in walk_folders(fd):
            seen += [(folder.rel, name, folder.st is None, kind_of(st)) for name, st in folder.files]
            if folder.rel == "a":  # b is listed already; swap it now
                os.rename(ws / "b", ws / "b.aside")
                os.symlink(host, ws / "b")
    finally:
        os.close(fd)
    assert ("", "b", True, "symlink") in seen  # a late batch of the root: what b is now
    assert all(name != "secret" for _, name, _, _ in seen)
