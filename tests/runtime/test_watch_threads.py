"""Runs of one process start at once (an eval's cells run in threads): the start manifests' live trees stay each
run's own. CI found one run's start closing another's tree (`Bad file descriptor` on a later write, `dictionary
changed size during iteration`). This smoke test did not reproduce it on the old code (the window is small under the
GIL); the eval's own test (tests/runtime/test_eval_e2e.py) did, and passes with the lock."""

from __future__ import annotations

import threading
from pathlib import Path

from tether.common.atomic import write_atomic
from tether.common.limits import WorkspaceLimits
from tether.runtime.workspace.watch import run_watch, save_start


def test_runs_started_in_threads_keep_their_own_live_trees(tmp_path: Path) -> None:
    limits = WorkspaceLimits()
    errors: list[BaseException] = []
    go = threading.Barrier(16)

    def one(i: int) -> None:
        try:
            ws, run_dir = tmp_path / f"ws{i}", tmp_path / f"run{i}"
            ws.mkdir()
            run_dir.mkdir()
            for k in range(5):
                (ws / f"f{k}.txt").write_text(f"{i}-{k}\n")
            go.wait()
            for _ in range(15):
                start = save_start(run_dir, ws, limits)
                watch = run_watch(run_dir, ws, limits, start)
                try:
                    (ws / "new.txt").write_text("x\n")
                    assert "new.txt" in watch.final()
                    write_atomic(run_dir / "run.json", "{}")  # a state write beside the trees' descriptors
                finally:
                    watch.close()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:3]
