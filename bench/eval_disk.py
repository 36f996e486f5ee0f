"""Disk the README's eval command leaves behind: real (blocks on disk) and apparent (file sizes, holes included).

Runs exactly what README.md suggests, `tether eval examples/tasks --model
scripted:task --image tether-sandbox:tiny --jobs 4 --trials 1`, through the
installed CLI with a fresh Tether home (TETHER_HOME) in a temp folder, then
totals what that home holds (the eval's OUT is `HOME/evals/tasks`): every
file, not following links, counted once per inode. Real bytes are what
`du -s` reports, apparent bytes what `du -s --apparent-size` reports; the
vector index's preallocated segments are holes, so the two differ. Also
printed: the part of each that is the cells' memory indexes (`.index`,
rebuilt from the markdown whenever missing). Target: real <= 100 MB
(issue 23; the index copies were once dense, 1.3 GB).

    .venv/bin/python bench/eval_disk.py [--jobs 4] [--dir /tmp] [--keep]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = 100 * 1000 * 1000
"""100 MB, as `du -sh` counts a megabyte (MiB in du's -h; the figure below is printed both ways)."""


def usage(folder: Path) -> dict[str, int]:
    """Real and apparent bytes under `folder` (and their `.index` share), each inode once, no link followed."""
    seen: set[tuple[int, int]] = set()
    out = {"real": 0, "apparent": 0, "index_real": 0, "index_apparent": 0, "files": 0}
    for top, dirs, files in os.walk(folder):
        in_index = "/.index" in top[len(str(folder)):] + "/"
        for name in dirs + files:
            st = os.lstat(os.path.join(top, name))
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            real, apparent = st.st_blocks * 512, st.st_size
            out["real"] += real
            out["apparent"] += apparent
            out["files"] += name in files
            if in_index or name == ".index":
                out["index_real"] += real
                out["index_apparent"] += apparent
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--keep", action="store_true", help="leave the home in place (its path is printed)")
    args = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="tether-eval-disk-", dir=args.dir))
    tether = Path(sys.executable).with_name("tether")
    cmd = [str(tether) if tether.exists() else "tether", "eval", "examples/tasks", "--model", "scripted:task",
           "--image", "tether-sandbox:tiny", "--jobs", str(args.jobs), "--trials", "1"]
    try:
        t = time.monotonic()
        done = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "TETHER_HOME": str(home)}, capture_output=True,
                              text=True, check=False)
        wall = time.monotonic() - t
        if done.returncode != 0:
            print(done.stdout[-2000:], done.stderr[-2000:], sep="\n")
            sys.exit(f"the eval exited {done.returncode}")
        u = usage(home)
    finally:
        if not args.keep:
            shutil.rmtree(home, ignore_errors=True)
    mb = 1000 * 1000
    print(f"{' '.join(cmd[1:])}  ({wall:.0f} s; home {home}{'' if args.keep else ', removed'})")
    print(f"{'':<24}{'real':>12}{'apparent':>12}")
    print(f"{'left in the home':<24}{u['real'] / mb:>10.1f}MB{u['apparent'] / mb:>10.1f}MB   ({u['files']} files)")
    print(f"{'of which memory indexes':<24}{u['index_real'] / mb:>10.1f}MB{u['index_apparent'] / mb:>10.1f}MB")
    print(f"disk left, real: {u['real'] / mb:.1f} MB ({u['real'] / (1 << 20):.1f} MiB), {u['real'] / TARGET:.2f}x the "
          f"target of 100 MB -> {'met' if u['real'] <= TARGET else 'NOT met'}; apparent "
          f"{u['apparent'] / mb:.1f} MB ({u['apparent'] / max(u['real'], 1):.0f}x real)")


if __name__ == "__main__":
    main()
