"""How long `tether runs` takes on a home with many runs (target: 1,000 runs in <= 1 s).

Makes a home with N run folders (default 1,000), each written the way the
runner writes one: a journal of a 4-step run (~45 events, a few KB of command
output) through common.journal.Journal, run.json with the totals the runner
saves at the end, and memory.json; statuses mixed. Then times, best of 3:
`list_runs()` in-process (all runs, no limit) and the `tether runs --limit N`
command as a new process (Python start-up and imports included).

    python bench/runs_list.py [--runs 1000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tether.common.events import (  # noqa: E402
    CommandProposed,
    ExecFinished,
    ExecStarted,
    GateRecorded,
    PlanAccepted,
    RunEnded,
    RunStarted,
    StepChanged,
    SummaryWritten,
    VerdictRecorded,
)
from tether.common.journal import Journal  # noqa: E402
from tether.runtime.run.totals import totals_from_events  # noqa: E402
from tether.runtime.views.run_list import list_runs  # noqa: E402

STATUSES = ("success", "success", "success", "failed", "blocked", "interrupted")


def make_run(runs_dir: Path, i: int, t0: float) -> None:
    started = t0 + i * 60
    run_id = time.strftime("%Y%m%d-%H%M%S-", time.localtime(started)) + f"{i:06x}"
    folder = runs_dir / run_id
    journal = Journal(folder / "journal.jsonl")
    status = STATUSES[i % len(STATUSES)]
    steps = [
        {
            "id": f"step-{k}",
            "description": f"do part {k}",
            "depends_on": [f"step-{k - 1}"] if k else [],
            "verify": "test -f out",
        }
        for k in range(4)
    ]
    ts = started
    journal.append(
        RunStarted(
            key="run_start",
            ts=ts,
            run_id=run_id,
            goal=f"bench goal number {i}: make out.txt and test it",
            workspace="/tmp/ws",
            model="scripted:x",
        )
    )
    journal.append(PlanAccepted(key="plan:0", ts=ts, attempt=0, steps=steps))
    for k, step in enumerate(steps):
        sid = step["id"]
        journal.append(StepChanged(key=f"step:{sid}:running", ts=ts, step=sid, status="running"))
        for c in range(2):
            cid = f"{sid}/{c}/0"
            journal.append(
                CommandProposed(
                    key=f"cmd:{cid}",
                    ts=ts,
                    cmd_id=cid,
                    step=sid,
                    tool="run_shell",
                    command=f"echo part {k} >> out && cat out",
                    cwd="/home/tether/workspace",
                )
            )
            journal.append(VerdictRecorded(key=f"verdict:{cid}", ts=ts, cmd_id=cid, decision="allow", enforced="allow"))
            journal.append(ExecStarted(key=f"exec_start:{cid}", ts=ts, cmd_id=cid))
            journal.append(
                ExecFinished(
                    key=f"exec:{cid}",
                    ts=ts + 0.1,
                    cmd_id=cid,
                    exit_code=0,
                    output="line of output\n" * 40,
                    duration_s=0.1,
                )
            )
            ts += 0.5
        journal.append(
            StepChanged(
                key=f"step:{sid}:done", ts=ts, step=sid, status="done" if status == "success" or k < 2 else "failed"
            )
        )
    journal.append(SummaryWritten(key="summary", ts=ts, text="made out", files=["out"], commands=["cat out"]))
    journal.append(
        GateRecorded(
            key="gate",
            ts=ts,
            passed=status == "success",
            results=[
                {"id": f"R{r:02d}", "title": "t", "status": "pass" if r % 5 else "n/a", "evidence": "e"}
                for r in range(1, 19)
            ],
        )
    )
    journal.append(RunEnded(key="run_end", ts=ts + 1, status=status))
    journal.close()
    totals = totals_from_events(journal.events, cost={"model_calls": 9, "tokens": 4000}, lesson_ids=["L-1"])
    meta = {
        "goal": f"bench goal number {i}: make out.txt and test it",
        "workspace": "/tmp/ws",
        "model_spec": "scripted:x",
        "approval": "refuse",
        "shadow": False,
        "memory": True,
        "run_id": run_id,
        "status": status,
        "reason": "",
        "memory_context": "Memory: ...",
        "lesson_ids": ["L-1"],
        "started_at": started,
        "totals": totals,
    }
    (folder / "run.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    (folder / "memory.json").write_text(
        json.dumps({"lessons_used": ["L-1"], "lessons_written": ["L-2"], "memory_calls": 2}), encoding="utf-8"
    )


def best(fn, n: int = 3) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def child(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Best-of-3 wall time and CPU time (user + sys) of a command."""
    walls, cpus = [], []
    for _ in range(3):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(cmd, capture_output=True, env=env, cwd=ROOT, check=True)
        walls.append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return min(walls), min(cpus)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--keep", type=Path, help="make the home here and keep it")
    args = ap.parse_args()
    home = args.keep or Path(tempfile.mkdtemp(prefix="tether-runs-bench-"))
    runs_dir = home / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    t0 = time.time() - args.runs * 60
    for i in range(args.runs):
        make_run(runs_dir, i, t0)
    made = time.perf_counter() - t
    size = sum(p.stat().st_size for p in runs_dir.rglob("*") if p.is_file())
    journals = sum(p.stat().st_size for p in runs_dir.glob("*/journal.jsonl"))
    print(
        f"home: {home} ({args.runs} runs, {size / 1e6:.1f} MB, of which journals {journals / 1e6:.1f} MB; made in "
        f"{made:.1f} s)"
    )
    lines = list_runs(runs_dir)
    assert len(lines) == args.runs, len(lines)
    print(f"list_runs() in-process, all {len(lines)} runs:      {best(lambda: list_runs(runs_dir)) * 1000:7.1f} ms")
    env = dict(os.environ)
    base = [sys.executable, "-m", "tether"]
    listing = [*base, "runs", "--limit", str(args.runs), "--home", str(home)]
    print(
        f"load average now: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s) (wall times below include waiting "
        "for a CPU)"
    )
    for label, cmd in (
        (f"tether runs --limit {args.runs}", listing),
        (f"tether runs --limit {args.runs} --json", [*listing, "--json"]),
        ("tether --help (start-up only)", [*base, "--help"]),
    ):
        wall, cpu = child(cmd, env)
        print(f"`{label}` as a new process: wall {wall * 1000:7.1f} ms, CPU {cpu * 1000:7.1f} ms (best of 3)")
    if not args.keep:
        shutil.rmtree(home)


if __name__ == "__main__":
    main()
