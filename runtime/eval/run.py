"""`tether eval`: run every method on every task, in phases, and tabulate the outcomes.

Parts: `EvalOptions`, `plan_cells` (the cells in the order their memory
needs), `run_eval` (images, cells with `jobs` in parallel, the per-task
table, the summary, eval.json and eval.md in OUT).

Methods: `no-memory` (3 trials, the reference majority), `rerun` (3 more
no-memory trials: the noise band), `memory` (the whole cycle) and
`lessons-only` (recall of the same lessons, no sources, no descent, nothing
learnt). Where memory comes from: with train/ and test/, each memory trial
first learns on the train tasks in order (full cycle), and every test task
of that trial starts from a copy of the trained memory; without a split the
tasks run in order and each starts from the memory the previous task left
(online learning). `lessons-only` starts from the same memory as `memory`
on that task and trial. All memory methods share one project identity
(`eval:<folder>`), so lessons recalled across tasks are not ranked as
foreign.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from pydantic import BaseModel, Field

from tether.common.atomic import write_atomic
from tether.common.errors import ConfigError
from tether.runtime.config import TetherConfig
from tether.runtime.eval.cells import SCRIPTED_PER_TASK, Cell, CellResult, EvalContext, run_cell
from tether.runtime.eval.report import render_markdown
from tether.runtime.eval.stats import reference, summarize
from tether.runtime.eval.tasks import TaskSet, load_tasks, scenario_for

SETTINGS = "eval-settings.json"
KEPT_S = 0.5
"""A cell that returns faster than this was kept from an earlier eval: it does not count toward the time estimate."""


class EvalOptions(BaseModel):
    """What `tether eval` was asked."""

    tasks: Path
    model_spec: str
    out: Path
    jobs: int = Field(default=1, ge=1)
    trials: int = Field(default=3, ge=1)
    """Trials of `memory` and `lessons-only` per task."""
    reference_trials: int = Field(default=3, ge=1)
    rerun_trials: int = Field(default=3, ge=0)
    image: str | None = None
    """Sandbox image of tasks without an environment/Dockerfile (default: the configured one)."""
    test_timeout_s: float = Field(default=600.0, gt=0)
    build_network: bool = False
    """`--build-network`: task Dockerfiles are built step by step through the egress proxy (docs/network.md)."""


def plan_cells(ts: TaskSet, o: EvalOptions, ctx: EvalContext) -> list[list[Cell]]:
    """Phases of cells; the cells of one phase are independent of each other."""
    baseline = [
        Cell(task=t, method=m, trial=n)
        for t in ts.test
        for m, count in (("no-memory", o.reference_trials), ("rerun", o.rerun_trials))
        for n in range(1, count + 1)
    ]
    phases: list[list[Cell]] = [baseline]
    trials = range(1, o.trials + 1)
    chains: dict[int, list[Path]] = {n: [] for n in trials}  # memory folders of each trial's chain, latest first
    for task in ts.train:
        phase = []
        for n in trials:
            cell = Cell(task=task, method="train", trial=n, memory_from=list(chains[n]))
            chains[n].insert(0, ctx.memory_dir(cell))
            phase.append(cell)
        phases.append(phase)
    online = not ts.split
    phase = []
    for task in ts.test:
        step = []
        for n in trials:
            memory = Cell(task=task, method="memory", trial=n, memory_from=list(chains[n]))
            step += [memory, Cell(task=task, method="lessons-only", trial=n, memory_from=list(chains[n]))]
            if online:
                chains[n].insert(0, ctx.memory_dir(memory))
        if online:
            phases.append(step)
        else:
            phase += step
    if phase:
        phases.append(phase)
    phases[0] += phases.pop(1) if len(phases) > 1 else []  # the first chain step runs alongside the baselines
    return phases


def _check_settings(o: EvalOptions, ts: TaskSet) -> None:
    settings = {
        "tasks": str(ts.root),
        "model": o.model_spec,
        "trials": o.trials,
        "reference_trials": o.reference_trials,
        "rerun_trials": o.rerun_trials,
        "image": o.image,
        **({"build_network": True} if o.build_network else {}),  # an eval of before keeps its settings file valid
    }
    path = o.out / SETTINGS
    if path.is_file():
        try:
            before = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            before = None
        if before != settings:
            msg = (
                f"{o.out} holds an eval with other settings ({path.name}); pass another --out, or remove the folder "
                "to start over"
            )
            raise ConfigError(msg)
    write_atomic(path, json.dumps(settings, indent=2))


def _images(config: TetherConfig, ts: TaskSet, default: str, o: EvalOptions) -> dict[str, tuple[str | None, str]]:
    from tether.runtime.eval.build_network import networked_builder
    from tether.runtime.eval.sandbox import task_image
    from tether.sandbox.engine import connect
    from tether.sandbox.images import ensure_image

    client = connect(config.sandbox.docker_host)
    if any(t.dockerfile is None for t in ts.train + ts.test):
        ensure_image(client, default, pull_missing=config.sandbox.pull_missing)
    builder = networked_builder(config, o.out / "builds") if o.build_network else None
    return {t.name: task_image(client, t, default, builder) for t in ts.train + ts.test}


def _rows(ts: TaskSet, results: list[CellResult], reference_trials: int) -> list[dict[str, Any]]:
    rows = []
    for task in ts.test:
        mine = sorted((r for r in results if r.task == task.name), key=lambda r: (r.method, r.trial))
        skipped = next((r.reason for r in mine if r.status == "skipped"), None)
        row: dict[str, Any] = {"task": task.name, "split": task.split, "skipped": skipped, "methods": {}}
        for r in mine:
            row["methods"].setdefault(r.method, []).append(r.model_dump(exclude={"task", "split", "method"}))
        row["reference"] = {"trials": [t["passed"] for t in row["methods"].get("no-memory", [])],
                            "majority": reference(row, reference_trials)}
        rows.append(row)
    return rows


class Progress(BaseModel):
    """Where an eval stands after a cell ends: `[done/total]`, time so far and a guess of the time left."""

    done: int
    total: int
    elapsed_s: float
    left_s: float | None
    """Mean time of the cells that ran (not those resumed from an earlier eval) times the cells left."""


def run_eval(
    config: TetherConfig, o: EvalOptions, on_cell: Callable[[CellResult, Progress], None] | None = None
) -> dict[str, Any]:
    """Run (or resume) the eval in `o.out`; returns the JSON report, also written to eval.json and eval.md."""
    ts = load_tasks(o.tasks)
    if o.model_spec == SCRIPTED_PER_TASK:  # every scenario must exist before anything runs
        for task in ts.test:
            for method, count in (("no-memory", o.reference_trials), ("rerun", o.rerun_trials),
                                  ("memory", o.trials), ("lessons-only", o.trials)):
                for n in range(1, count + 1):
                    scenario_for(task, method, n)
        for task in ts.train:
            for n in range(1, o.trials + 1):
                scenario_for(task, "memory", n)
    o.out.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(o.out / ".lock"), timeout=0)
    try:
        lock.acquire()
    except Timeout as e:
        msg = f"another `tether eval` is running in {o.out}; wait for it or pass another --out"
        raise ConfigError(msg) from e
    try:
        _check_settings(o, ts)
        default = o.image or config.sandbox.image
        ctx = EvalContext(config=config, model_spec=o.model_spec, out=o.out.resolve(), project=f"eval:{ts.root.name}",
                          images=_images(config, ts, default, o), test_timeout_s=o.test_timeout_s)
        results: list[CellResult] = []
        phases = plan_cells(ts, o, ctx)
        total, began, guard = sum(len(p) for p in phases), time.monotonic(), threading.Lock()
        ran: list[float] = []  # seconds of the cells that really ran (kept results come back at once)
        finished = [0]

        def one(cell: Cell) -> CellResult:
            started = time.monotonic()
            result = run_cell(ctx, cell)
            with guard:
                took = time.monotonic() - started
                if took > KEPT_S:
                    ran.append(took)
                finished[0] += 1
                mean = sum(ran) / len(ran) if ran else None
                progress = Progress(done=finished[0], total=total, elapsed_s=time.monotonic() - began,
                                    left_s=None if mean is None else mean * (total - finished[0]) / o.jobs)
            if on_cell is not None:
                on_cell(result, progress)
            return result

        pool = ThreadPoolExecutor(max_workers=o.jobs)
        try:
            for phase in phases:
                results += list(pool.map(one, phase))
        finally:  # Ctrl-C or SIGTERM: queued cells never start, running ones finish and keep their results
            pool.shutdown(wait=True, cancel_futures=True)
        report = _report(ts, o, results)
        write_atomic(o.out / "eval.json", json.dumps(report, indent=2))
        write_atomic(o.out / "eval.md", render_markdown(report))
        return report
    finally:
        lock.release()


def _report(ts: TaskSet, o: EvalOptions, results: list[CellResult]) -> dict[str, Any]:
    rows = _rows(ts, results, o.reference_trials)
    train = [r for r in results if r.method == "train" and r.status == "done"]
    return {
        "tasks": str(ts.root),
        "model": o.model_spec,
        "mode": "train/test" if ts.split else "online (no split: each task learns from the ones before it)",
        "trials": {
            "no-memory": o.reference_trials,
            "rerun": o.rerun_trials,
            "memory": o.trials,
            "lessons-only": o.trials,
        },
        "table": rows,
        "summary": summarize(rows, o.reference_trials),
        "training": {
            "tasks": len(ts.train),
            "runs": len(train),
            "tokens": sum(r.tokens + r.memory_tokens for r in train),
            "model_calls": sum(r.model_calls + r.memory_calls for r in train),
        },
        "errors": [f"{r.task}/{r.method}-{r.trial}: {r.reason}" for r in results if r.status == "error"],
    }
