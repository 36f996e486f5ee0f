"""Every speed figure of issue 23 in one run, each against its own yardstick.

Each figure comes from the bench script that owns it (so there is one way
to measure each thing); this script runs them one after another in the same
session, on the same machine load, and prints every line that states a
target, then one summary table. The yardsticks are measured inside each
script in the same run as the figure (`python3 -c pass`, `bash -c true`
spawned in the container, bare `exec_run`, a first run), so the ratios hold
on a noisy machine where absolute times do not.

    python bench/speed.py            # default sizes (minutes)
    python bench/speed.py --quick    # small sizes, for a smoke run
    python bench/speed.py --only sandbox,cli
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# name -> (script, full arguments, quick arguments)
BENCHES: dict[str, tuple[str, list[str], list[str]]] = {
    "sandbox": ("sandbox.py", ["-n", "200"], ["-n", "40", "--starts", "2"]),
    "cli": ("cli_startup.py", ["-n", "20"], ["-n", "8"]),
    "first-command": ("first_command.py", ["-n", "5"], ["-n", "2"]),
    "workspace": ("workspace_cost.py", ["--files", "10,200000"], ["--files", "10,20000", "--commands", "4"]),
    "eval-disk": ("memory_eval_cost.py", [], ["--jobs", "2"]),
}


def run_one(name: str, quick: bool, timeout: float) -> tuple[int | None, float, list[str]]:
    """Runs one bench script; returns its exit code, wall time and its target lines."""
    script, full, small = BENCHES[name]
    argv = [sys.executable, str(HERE / script), *(small if quick else full)]
    start = time.monotonic()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=os.environ.copy())
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - start, [f"timed out after {timeout:.0f} s"]
    wall = time.monotonic() - start
    lines = [ln.rstrip() for ln in done.stdout.splitlines() if "target" in ln or "ratio" in ln]
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["(no error output)"])[-1]
        lines.append(f"exit {done.returncode}: {tail}")
    return done.returncode, wall, lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes: a smoke run, not the judged figures")
    ap.add_argument("--only", default="", help=f"comma-separated subset of: {', '.join(BENCHES)}")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds each bench may take")
    args = ap.parse_args()
    names = [n.strip() for n in args.only.split(",") if n.strip()] or list(BENCHES)
    unknown = [n for n in names if n not in BENCHES]
    if unknown:
        sys.exit(f"bench/speed.py: unknown bench {', '.join(unknown)}; choose from {', '.join(BENCHES)}")
    summary: list[tuple[str, str, float]] = []
    for name in names:
        print(f"== {name} ({BENCHES[name][0]})", flush=True)
        code, wall, lines = run_one(name, args.quick, args.timeout)
        for ln in lines:
            print(f"   {ln}", flush=True)
        met = [ln for ln in lines if "target" in ln]
        state = "error" if code != 0 else ("NOT met" if any("NOT met" in ln for ln in met) else
                                           "met" if any(": met" in ln or "-> met" in ln for ln in met) else "see lines")
        summary.append((name, state, wall))
    print("\nbench            state       wall")
    for name, state, wall in summary:
        print(f"{name:<16} {state:<10} {wall:6.0f} s")


if __name__ == "__main__":
    main()
