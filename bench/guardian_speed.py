"""Speed and crash test of the guardian over unlabelled real one-liners.

Usage: python bench/guardian_speed.py [FILE.jsonl] [--limit N]

Checks every distinct command once (cold cache), asserts that no exception
escapes `check`, and prints median and p99 milliseconds per command and
commands per second, plus the decision mix. The same figures in CPU time of
this process (`time.process_time`) are printed too: on a loaded machine
wall-clock times measure the other processes as much as the guardian.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from tether.guardian import CheckContext, check
from tether.guardian.checker import clear_cache

DEFAULT = Path("/work/shared/corpora/nl2bash_unlabelled.jsonl")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--limit", type=int, default=0, help="check only the first N commands")
    args = ap.parse_args(argv)
    commands = list(dict.fromkeys(
        json.loads(line)["command"] for line in args.file.read_text().splitlines() if line.strip()))
    if args.limit:
        commands = commands[: args.limit]
    ctx = CheckContext(workspace="/home/tether/project")
    check("true", ctx)  # import and load the rule table outside the timing
    clear_cache()
    times, cpu, decisions, escaped, failures = [], [], Counter(), 0, Counter()
    start = time.perf_counter()
    for cmd in commands:
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            v = check(cmd, ctx)
        except Exception as e:  # the guarantee under test: nothing escapes
            escaped += 1
            print(f"ESCAPED {type(e).__name__}: {e} :: {cmd[:100]}", file=sys.stderr)
            continue
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        decisions[v.decision] += 1
        if "GUARD-FAIL" in v.rules:
            failures[v.reason.split("(")[-1].split(":")[0]] += 1
    total = time.perf_counter() - start
    times.sort()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    print(f"file: {args.file.name}  distinct commands: {len(commands)}  exceptions escaped: {escaped}")
    print(f"median {statistics.median(times):.3f} ms   p99 {p99:.3f} ms   max {times[-1]:.1f} ms   "
          f"{len(times) / total:.0f} commands/s")
    cpu.sort()
    print(f"cpu    median {statistics.median(cpu):.3f} ms   p99 {cpu[min(len(cpu) - 1, int(len(cpu) * 0.99))]:.3f} ms"
          f"   max {cpu[-1]:.1f} ms   (process time)")
    print("decisions: " + ", ".join(f"{k}={v}" for k, v in sorted(decisions.items())))
    print("GUARD-FAIL causes: " + ", ".join(f"{k}={v}" for k, v in failures.most_common(6)))
    return 1 if escaped else 0


if __name__ == "__main__":
    sys.exit(main())
