"""What "only the run's changes" costs: recording them, rolling back, a shadow copy, applying it.

On a workspace of N small files (folders of 100, older than RACY_NS) a "run"
changes K files, adds K and deletes K. Measured, each the median of a few
repetitions, next to a yardstick taken in the same run on the same tree:
a cold manifest (`common.manifest.scan` with no cache: it reads and hashes
every file, what the gate's cold pass costs):

- snapshot: the pre-run copy (reflink where the file system has it);
- record: `record_changes` at the run's end (stat of every entry; bytes
  read only for the files whose stat moved);
- rollback: planning and carrying out `tether rollback` (backups included);
- shadow copy: making a shadow run's copy from its snapshot;
- apply: planning and carrying out `tether apply` of that copy.

Target: recording the changes <= 0.5x the cold manifest at 20k files (its
cost follows the changes, not the workspace).

    .venv/bin/python bench/undo_cost.py [--files 2000,20000] [--changed 10] [--repeat 3] [--dir /tmp]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tether.common.limits import WorkspaceLimits  # noqa: E402
from tether.common.manifest import RACY_NS, scan  # noqa: E402
from tether.common.snapshot import snapshot  # noqa: E402
from tether.common.walk import remove_path  # noqa: E402
from tether.runtime.workspace.changes import record_changes  # noqa: E402
from tether.runtime.workspace.history import apply_items, undo_items  # noqa: E402
from tether.runtime.workspace.merge import plan  # noqa: E402
from tether.runtime.workspace.shadow import make_shadow_copy  # noqa: E402
from tether.runtime.workspace.writer import carry_out  # noqa: E402

LIMITS = WorkspaceLimits()


def build(root: Path, files: int) -> None:
    for i in range(files):
        d = root / f"d{i // 100}"
        if i % 100 == 0:
            d.mkdir()
        (d / f"f{i}.txt").write_text(f"file {i} " + "x" * 56)
    time.sleep(RACY_NS / 1e9 + 0.5)  # older than RACY_NS, as a workspace is between runs


def the_run(ws: Path, k: int, tag: str, offset: int) -> None:
    for i in range(k):
        (ws / f"d{i}" / f"f{i * 100 + offset}.txt").write_text(f"changed by run {tag}")
        (ws / f"new-{tag}-{i}.txt").write_text("added")
        (ws / f"d{i}" / f"f{i * 100 + offset + 1}.txt").unlink()


def timed(fn) -> float:  # noqa: ANN001
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def measure(base: Path, files: int, k: int, repeat: int) -> dict[str, float]:
    ws = base / "ws"
    ws.mkdir()
    build(ws, files)
    out: dict[str, list[float]] = {n: [] for n in ("cold", "snapshot", "record", "rollback", "shadow", "apply")}
    for r in range(repeat):
        out["cold"].append(timed(lambda: scan(ws, LIMITS)))
        run_dir = base / "runs" / f"r{r}"
        out["snapshot"].append(timed(lambda: snapshot(ws, run_dir, LIMITS)))  # noqa: B023
        the_run(ws, k, str(r), 4 * r)
        out["record"].append(timed(lambda: record_changes(run_dir, ws, LIMITS, run_id=run_dir.name,  # noqa: B023
                                                          workspace=ws)))
        changes = record_changes(run_dir, ws, LIMITS, run_id=run_dir.name, workspace=ws)

        def rollback() -> None:
            p = plan(ws, undo_items(run_dir, changes), LIMITS.hash_max_bytes)  # noqa: B023
            assert not p.conflicts and p.steps
            carry_out(p, run_dir / "backups" / "rollback")  # noqa: B023

        out["rollback"].append(timed(rollback))
        shadow_dir = base / "runs" / f"s{r}"
        out["shadow"].append(timed(lambda: make_shadow_copy(ws, shadow_dir, LIMITS)))  # noqa: B023
        copy = shadow_dir / "shadow"
        the_run(copy, k, f"s{r}", 4 * r + 2)
        shadow_changes = record_changes(shadow_dir, copy, LIMITS, run_id=shadow_dir.name, workspace=ws, shadow=True)

        def apply() -> None:
            p = plan(ws, apply_items(shadow_dir, shadow_changes), LIMITS.hash_max_bytes)  # noqa: B023
            assert not p.conflicts and p.steps
            carry_out(p, shadow_dir / "backups" / "apply")  # noqa: B023

        out["apply"].append(timed(apply))
        remove_path(base / "runs")
        time.sleep(RACY_NS / 1e9 + 0.1)
    remove_path(ws)
    return {n: statistics.median(v) for n, v in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", default="2000,20000")
    ap.add_argument("--changed", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    sizes = [int(x) for x in args.files.split(",")]
    print(f"undo and shadow costs (median of {args.repeat}; seconds; a run changes {args.changed}, adds "
          f"{args.changed}, deletes {args.changed} files; temp dir {args.dir or tempfile.gettempdir()})")
    print(f"{'files':>8} {'cold scan':>10} {'snapshot':>9} {'record':>8} {'rollback':>9} {'shadow':>8} {'apply':>8} "
          f"{'record/cold':>12}")
    last = None
    for n in sizes:
        with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
            m = measure(Path(tmp), n, args.changed, args.repeat)
        last = (n, m)
        print(f"{n:>8} {m['cold']:>10.3f} {m['snapshot']:>9.3f} {m['record']:>8.3f} {m['rollback']:>9.3f} "
              f"{m['shadow']:>8.3f} {m['apply']:>8.3f} {m['record'] / m['cold']:>11.2f}x")
    if last is not None:
        n, m = last
        ratio = m["record"] / m["cold"]
        print(f"recording a run's changes at {n} files: {ratio:.2f}x a cold manifest ({m['record']:.3f} s vs "
              f"{m['cold']:.3f} s); target <= 0.5x -> {'met' if ratio <= 0.5 else 'NOT met'}")


if __name__ == "__main__":
    main()
