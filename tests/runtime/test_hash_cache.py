"""The hashes one run leaves for the next run of the same workspace (runtime.workspace.hash_cache).

Real files, real scans: a second start manifest of an unchanged workspace
reads no file, and every way a file can change (or the cache can be doubted)
means hashing it again.
"""

import json
import os
import time

import pytest

import tether.common.manifest as manifest_mod
from tether.common.limits import WorkspaceLimits
from tether.common.manifest import diff, manifest, scan
from tether.runtime.hooks.base import NoHooks
from tether.runtime.run.phases import prepare
from tether.runtime.workspace import hash_cache, manifest_file, watch
from tether.runtime.workspace.watch import START_MANIFEST, load_start, save_start

LIMITS = WorkspaceLimits()


@pytest.fixture
def later(monkeypatch):
    """Move the clock past RACY_NS, as the next run sees files left by the last one (they are not racy)."""
    real = time.time_ns
    shift = [0]
    monkeypatch.setattr(manifest_mod.time, "time_ns", lambda: real() + shift[0])

    def advance() -> None:
        shift[0] += 10 * manifest_mod.RACY_NS

    return advance


def _workspace(tmp_path, n=5):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "sub").mkdir()
    for i in range(n):
        (ws / ("sub" if i % 2 else ".") / f"f{i}.txt").write_text(f"content {i}")
    return ws


def _home(tmp_path):
    home = tmp_path / "home"
    (home / "runs").mkdir(parents=True)
    return home


def _start(home, ws, run_id):
    run_dir = home / "runs" / run_id
    run_dir.mkdir()
    return save_start(run_dir, ws, LIMITS, home=home)


def _reuse(home, ws, limits=LIMITS):
    """A scan with the cache the last run left: (its manifest, files it had to read)."""
    cache = hash_cache.load(home, ws, limits.hash_max_bytes)
    states = scan(ws, limits, cache).states
    return states, cache.hashed


def test_second_start_reads_no_unchanged_file(tmp_path, later):
    ws, home = _workspace(tmp_path), _home(tmp_path)
    later()
    first = _start(home, ws, "r1")
    later()
    states, hashed = _reuse(home, ws)
    assert hashed == 0
    assert states == first == manifest(ws)
    assert load_start(home / "runs" / "r1") == first
    # the second run's own start manifest (through the cache) is exact too; the cache is that very file (a link)
    path = hash_cache.cache_path(home, ws)
    text = path.read_bytes()
    assert _start(home, ws, "r2") == manifest(ws)
    assert os.path.samefile(path, home / "runs" / "r2" / START_MANIFEST)
    assert _reuse(home, ws)[1] == 0
    # a change: the next start rewrites it, and the run after reads nothing again
    (ws / "f0.txt").write_text("changed")
    later()
    assert _start(home, ws, "r3") == manifest(ws)
    assert path.read_bytes() != text
    assert load_start(home / "runs" / "r2") == first  # the run before keeps its own start manifest
    later()
    assert _reuse(home, ws)[1] == 0


def test_every_change_is_hashed_again(tmp_path, later):
    ws, home = _workspace(tmp_path), _home(tmp_path)
    later()
    base = _start(home, ws, "r1")
    # same size, new bytes, mtime put back exactly (`touch -d`): the kernel still moved ctime
    f0 = ws / "f0.txt"
    st = f0.stat()
    f0.write_text("CONTENT 0")
    os.utime(f0, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert f0.stat().st_size == st.st_size and f0.stat().st_mtime_ns == st.st_mtime_ns
    # replaced by another file of the same size and mtime (a new inode, a new ctime)
    f1 = ws / "sub" / "f1.txt"
    st1 = f1.stat()
    (ws / "sub" / "tmp").write_text("other   1")
    os.utime(ws / "sub" / "tmp", ns=(st1.st_atime_ns, st1.st_mtime_ns))
    os.replace(ws / "sub" / "tmp", f1)
    (ws / "f2.txt").chmod(0o700)
    (ws / "f4.txt").unlink()
    (ws / "new.txt").write_text("new")
    later()
    states, hashed = _reuse(home, ws)
    assert states == manifest(ws)
    assert hashed == 4  # f0, f1, f2 (its mode), new.txt
    d = diff(base, states)
    assert (d.added, d.modified, d.deleted) == (["new.txt"], ["f0.txt", "f2.txt", "sub/f1.txt"], ["f4.txt"])


def test_files_changed_close_to_the_write_are_not_kept(tmp_path):
    ws, home = _workspace(tmp_path), _home(tmp_path)
    _start(home, ws, "r1")  # every file was written just now: all racy
    assert hash_cache.cache_path(home, ws).is_file()
    assert hash_cache.load(home, ws, LIMITS.hash_max_bytes).entries == {}
    assert watch.start_cache(home / "runs" / "r1", manifest(ws)).entries == {}
    assert _reuse(home, ws)[1] == 5


def _saved(home, ws, later):
    later()
    _start(home, ws, f"r{len(list((home / 'runs').iterdir()))}")
    later()
    path = hash_cache.cache_path(home, ws)
    return path, path.read_bytes()


def _with_header(raw: bytes, **changes) -> bytes:
    """The same body under an edited header (its checksum still matches: only the header's checks can refuse it)."""
    head, body = manifest_file.decode_header(raw)
    text = json.dumps({**head, **changes}).encode()
    return manifest_file.MAGIC + b"%d\n" % len(text) + text + bytes(body)


@pytest.mark.parametrize("spoil", ["garbage", "truncated", "flipped byte", "count", "version", "future", "racy entry",
                                   "other root", "settings"])
def test_a_doubtful_cache_is_not_trusted(tmp_path, later, spoil):
    ws, home = _workspace(tmp_path), _home(tmp_path)
    path, raw = _saved(home, ws, later)
    head, _ = manifest_file.decode_header(raw)
    assert len(hash_cache.load(home, ws, LIMITS.hash_max_bytes).entries) == 5
    mtime = (ws / "f0.txt").stat().st_mtime_ns
    spoiled = {
        "garbage": lambda: b"\0not a manifest",
        "truncated": lambda: raw[:-40],
        "flipped byte": lambda: raw[:-100] + bytes([raw[-100] ^ 1]) + raw[-99:],
        "count": lambda: _with_header(raw, count=head["count"] + 1),
        "version": lambda: _with_header(raw, version=99),
        "future": lambda: _with_header(raw, written_ns=time.time_ns() + 10**12),
        # the files were written together: each is within RACY_NS of this write time
        "racy entry": lambda: _with_header(raw, written_ns=mtime + manifest_mod.RACY_NS // 2),
        "other root": lambda: _with_header(raw, ino=head["ino"] + 1),
        "settings": lambda: _with_header(raw, hash_max_bytes=head["hash_max_bytes"] + 1),
    }[spoil]()
    path.unlink()  # the run's start manifest is another link to it: leave that one as it was
    path.write_bytes(spoiled)
    assert hash_cache.load(home, ws, LIMITS.hash_max_bytes).entries == {}
    states, hashed = _reuse(home, ws)
    assert states == manifest(ws)
    assert hashed == 5


def test_another_folder_at_the_same_path_and_other_settings_start_over(tmp_path, later):
    ws, home = _workspace(tmp_path), _home(tmp_path)
    _saved(home, ws, later)
    assert _reuse(home, ws, WorkspaceLimits(hash_max_bytes=1024))[1] == 5
    os.rename(ws, tmp_path / "old")
    ws2 = _workspace(tmp_path)  # the same names and bytes in a new folder
    assert _reuse(home, ws2)[1] == 5


def test_cache_lives_in_the_home_keyed_by_the_real_path(tmp_path, later):
    ws, home = _workspace(tmp_path), _home(tmp_path)
    path, _ = _saved(home, ws, later)
    assert path.parent == home.resolve() / "cache" / "manifests"
    assert not any("manifests" in p.name or p.suffix in (".json", ".bin") for p in ws.rglob("*"))
    link = tmp_path / "link"
    link.symlink_to(ws)
    assert hash_cache.cache_path(home, link) == path
    # a home inside the workspace gets no cache: the sandbox could write it
    inner = ws / "inner-home"
    (inner / "runs").mkdir(parents=True)
    assert hash_cache.cache_path(inner, ws) is None
    _start(inner, ws, "r9")
    assert not (inner / "cache").exists()


def test_cache_is_bounded(tmp_path, later, monkeypatch):
    home = _home(tmp_path)
    monkeypatch.setattr(hash_cache, "MAX_WORKSPACES", 2)
    folders = []
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
        folders.append(_workspace(tmp_path / name))
        _saved(home, folders[-1], later)
        time.sleep(0.01)
    kept = sorted(p.name for p in (home / "cache" / "manifests").iterdir())
    assert kept == sorted(hash_cache.cache_path(home, w).name for w in folders[1:])
    monkeypatch.setattr(hash_cache, "MAX_ENTRIES", 3)
    later()
    _start(home, folders[0], "big")
    assert not hash_cache.cache_path(home, folders[0]).exists()  # too many files: none kept, the next run hashes


def test_prepare_reuses_for_the_workspace_not_for_a_shadow_copy(tmp_path, later):
    ws, home = _workspace(tmp_path), _home(tmp_path)
    later()
    for run_id, shadow in (("r1", False), ("r2", True)):
        run_dir = home / "runs" / run_id
        run_dir.mkdir()
        meta = {"run_id": run_id, "goal": "g", "workspace": str(ws)}
        prepare(meta, run_dir, NoHooks(), shadow, LIMITS)
        assert load_start(run_dir) == manifest(ws)
    # one cache: the workspace's (the shadow copy, a fresh folder each run, left none)
    assert [p.name for p in (home / "cache" / "manifests").iterdir()] == [hash_cache.cache_path(home, ws).name]


def test_a_run_reads_its_start_back_from_memory_only_while_the_files_are_the_ones_written(tmp_path, later):
    from tether.runtime.workspace import watch

    ws, home = _workspace(tmp_path), _home(tmp_path)
    later()
    run_dir = home / "runs" / "r1"
    first = _start(home, ws, "r1")
    assert load_start(run_dir) == first
    cache = watch.start_cache(run_dir, first)
    assert sorted(cache.entries) == sorted(first) and all(cache.entries[k][1] is first[k] for k in first)
    # the same bytes written anew (another inode) are read from the file; corrupt ones fail as before
    raw = (run_dir / watch.START_MANIFEST).read_bytes()
    (run_dir / watch.START_MANIFEST).unlink()
    (run_dir / watch.START_MANIFEST).write_bytes(raw)
    assert load_start(run_dir) == first
    from_disk = watch.start_cache(run_dir, first)
    assert {k: v[0] for k, v in from_disk.entries.items()} == {k: v[0] for k, v in cache.entries.items()}
    (run_dir / watch.START_MANIFEST).write_bytes(raw[:-1] + b"x")
    with pytest.raises(ValueError):
        load_start(run_dir)
    assert watch.start_cache(run_dir, first).entries == {}


def test_the_run_keeps_the_start_manifest_s_live_tree_and_its_first_scan_sees_what_changed_since(tmp_path, later):
    from tether.runtime.workspace import watch as watch_mod

    ws, home = _workspace(tmp_path), _home(tmp_path)
    later()
    start = _start(home, ws, "r1")
    run_dir = home / "runs" / "r1"
    tree = watch_mod._HANDED[run_dir][1]
    assert tree.states == start and tree.seeded is None
    assert sorted(tree.cache.entries) == sorted(start)  # the stats the start manifest holds too
    hashed = tree.cache.hashed
    (ws / "f0.txt").write_text("changed between the start and the first command")
    (ws / "sub" / "late.txt").write_text("new")
    watch = watch_mod.run_watch(run_dir, ws, LIMITS, load_start(run_dir))
    try:
        assert watch.live is tree and run_dir not in watch_mod._HANDED
        first = watch.snapshot()
        assert first.states == manifest(ws)
        assert watch.changed(start, first) == ["f0.txt", "sub/late.txt"]
        assert tree.cache.hashed - hashed == 2  # the two changed files; nothing walked or read again
        assert watch.final() == manifest(ws)
    finally:
        watch.close()


def test_a_replaced_start_manifest_or_another_folder_gets_a_fresh_walk(tmp_path, later):
    from tether.runtime.workspace import watch as watch_mod

    ws, home = _workspace(tmp_path), _home(tmp_path)
    later()
    start = _start(home, ws, "r1")
    run_dir = home / "runs" / "r1"
    tree = watch_mod._HANDED[run_dir][1]
    raw = (run_dir / watch_mod.START_MANIFEST).read_bytes()
    (run_dir / watch_mod.START_MANIFEST).unlink()
    (run_dir / watch_mod.START_MANIFEST).write_bytes(raw)
    watch = watch_mod.run_watch(run_dir, ws, LIMITS, load_start(run_dir))
    assert watch.live is None and tree.notify == -1  # the handed tree was closed, not used
    assert watch.snapshot().states == start
    watch.close()
    _start(home, ws, "r2")
    other = tmp_path / "other"
    other.mkdir()
    watch = watch_mod.run_watch(home / "runs" / "r2", other, LIMITS, {})
    assert watch.live is None
    # a second start closes a tree no run took
    tree2 = watch_mod._HANDED.get(home / "runs" / "r2")
    _start(home, ws, "r3")
    assert tree2 is None or tree2[1].notify == -1
    watch_mod._HANDED.pop(home / "runs" / "r3")[1].close()


def test_start_without_inotify_room_walks_and_still_seeds_the_caches(tmp_path, later, monkeypatch):
    import tether.runtime.workspace.live as live
    from tether.runtime.workspace import watch as watch_mod

    def refuse(self, fd: int, rel: str) -> None:
        raise live.NotifyError(28, "No space left on device")

    monkeypatch.setattr(live.LiveTree, "_watch", refuse)
    ws, home = _workspace(tmp_path), _home(tmp_path)
    later()
    start = _start(home, ws, "r1")
    assert start == manifest(ws) and home / "runs" / "r1" not in watch_mod._HANDED
    later()
    assert _reuse(home, ws)[1] == 0
    assert len(watch_mod.start_cache(home / "runs" / "r1", start).entries) == 5


def test_a_run_recorded_before_the_compact_file_is_still_read(tmp_path, later):
    """Runs kept `start_manifest.json` and `start_stats.json` before: a resumed one still reads them."""
    ws, home = _workspace(tmp_path), _home(tmp_path)
    later()
    start = manifest(ws)
    run_dir = home / "runs" / "old"
    run_dir.mkdir()
    sigs = {}
    for rel in start:
        st = os.stat(ws / rel, follow_symlinks=False)
        sigs[rel] = [st.st_dev, st.st_ino, st.st_size, st.st_mode, st.st_mtime_ns, st.st_ctime_ns]
    (run_dir / watch.OLD_START_MANIFEST).write_text(json.dumps({k: v.model_dump() for k, v in start.items()}))
    (run_dir / watch.OLD_START_STATS).write_text(json.dumps(sigs))
    assert load_start(run_dir) == start
    cache = watch.start_cache(run_dir, start)
    assert sorted(cache.entries) == sorted(start)
    assert scan(ws, LIMITS, cache).states == start and cache.hashed == 0
    (run_dir / watch.OLD_START_STATS).write_text("[1, 2")  # unreadable stats: nothing reused, nothing wrong
    assert watch.start_cache(run_dir, start).entries == {}
