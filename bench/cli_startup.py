"""Start-up time of `tether --help` and `tether runs` as new processes, against `python3 -c pass`.

Usage: python bench/cli_startup.py [-n RUNS]

Each command runs RUNS times, interleaved with the yardstick (so machine load
hits all alike), after two warm-up runs; prints medians, p90 and the median
ratio to `python3 -c pass` (same interpreter; target <= 2x). `tether runs`
lists an empty home made for the bench (TETHER_HOME), so it measures
start-up, not the listing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _time(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - start) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=20, help="runs of each command")
    args = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="tether-bench-home-") as home:
        env = dict(os.environ, TETHER_HOME=home)
        cases = {"python3 -c pass": [py, "-c", "pass"], "tether --help": [py, "-m", "tether", "--help"],
                 "tether runs": [py, "-m", "tether", "runs"]}
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(2):
            for argv in cases.values():
                _time(argv, env)
        for _ in range(args.n):
            for name, argv in cases.items():
                samples[name].append(_time(argv, env))
    base = statistics.median(samples["python3 -c pass"])
    print(f"python: {py}  runs: {args.n} each, interleaved")
    for name, xs in samples.items():
        p90 = statistics.quantiles(xs, n=10)[-1]
        ratio = statistics.median(xs) / base
        target = "" if name.startswith("python3") else f"   ratio {ratio:.2f}x (target <= 2x: " \
                                                        f"{'met' if ratio <= 2 else 'NOT met'})"
        print(f"{name:<18} median {statistics.median(xs):7.1f} ms   p90 {p90:7.1f} ms{target}")


if __name__ == "__main__":
    main()
