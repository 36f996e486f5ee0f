"""Runtime overhead per step, without model or command time.

Runs the real runner (graph, SQLite checkpoints, journal, guardian,
workspace manifests, gate) on scripted plans of N trivial steps, with a null
sandbox that answers at once and a scripted model. Each step is one actor
turn: one `run_shell` command plus `finish_step`, which changes nothing.
The workspace holds `--files` files (default 200 of 4 KiB; `--files 0` is
the empty workspace earlier figures were measured on), which the manifests
before and after every command scan; they are older than
`common.manifest.RACY_NS` when measuring starts, so unchanged files are
stat-ed, not re-hashed (the printed counts say how many were hashed).

Subtracted: the scripted model's own `_generate` time and the null sandbox's
exec time (both near zero). Counted as overhead: everything else, including
LangChain's invoke machinery around the model, the guardian, the manifests,
checkpoint writes and journal fdatasyncs (on the file system of the temp
dir, printed). Not measured: a real sandbox's exec round trip (docker exec
costs tens of ms; see bench/sandbox.py) and a real model. The per-step
figure is the slope between a short and a long plan, so per-run costs (plan,
summary, gate, graph compile) drop out; it includes the growth of the
checkpointed state (plan, step table) with plan length.
Target: median <= 15 ms per step.

    .venv/bin/python bench/step_overhead.py [--short 5] [--long 45] [--repeat 5] [--files 200]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# bench/ holds other benches named like packages (bench/sandbox.py): keep it off the path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402

import tether.common.manifest as manifest_mod  # noqa: E402
from tether.runtime.config import load_config  # noqa: E402
from tether.runtime.models.scripted import Script, ScriptedChatModel  # noqa: E402
from tether.runtime.run.runner import RunOptions, start_run  # noqa: E402
from tether.sandbox.base import ExecResult  # noqa: E402

TARGET_MS = 15.0
COUNTS: dict[str, int] = {"checkpoints": 0, "pending writes": 0, "fdatasyncs": 0, "files hashed": 0}
"""Calls counted during a run, reported per step (slope, like the time)."""


def _count(owner: Any, name: str, label: str) -> None:
    """Wrap owner.name so each call bumps COUNTS[label] (a few hundred ns each)."""
    inner = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        COUNTS[label] += 1
        return inner(*args, **kwargs)

    setattr(owner, name, counted)


_count(SqliteSaver, "put", "checkpoints")
_count(SqliteSaver, "put_writes", "pending writes")
_count(os, "fdatasync", "fdatasyncs")
_count(manifest_mod, "_hash", "files hashed")


def fs_type(path: Path) -> str:
    """File system type of the mount holding `path` (fsync cost depends on it)."""
    best, kind = "", "?"
    try:
        for line in Path("/proc/mounts").read_text().splitlines():
            parts = line.split()
            if len(parts) > 2 and str(path).startswith(parts[1]) and len(parts[1]) >= len(best):
                best, kind = parts[1], parts[2]
    except OSError:
        pass
    return kind


def fill(ws: Path, files: int, kib: int) -> None:
    """A small project: `files` files of `kib` KiB in directories of 20."""
    blob = os.urandom(kib * 1024)
    for i in range(files):
        d = ws / f"pkg{i // 20}"
        d.mkdir(exist_ok=True)
        (d / f"mod{i}.py").write_bytes(blob[i:] + blob[:i])


class NullSandbox:
    """Implements the Sandbox protocol; every command succeeds at once."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.seconds = 0.0

    def exec(self, command: str, *, timeout_s: float | None = None, cwd: str | None = None) -> ExecResult:  # noqa: ARG002
        t = time.perf_counter()
        out = ExecResult(command=command, exit_code=0, output="", duration_s=0.0)
        self.seconds += time.perf_counter() - t
        return out

    def close(self) -> None:
        return None


class TimedModel(ScriptedChatModel):
    """The scripted model, with the time spent inside it counted."""

    seconds: float = 0.0

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        t = time.perf_counter()
        try:
            return super()._generate(messages, stop, run_manager, **kwargs)
        finally:
            self.seconds += time.perf_counter() - t


def script(n: int) -> Script:
    steps = [
        {"id": f"s{i}", "description": "noop", "depends_on": [f"s{i - 1}"] if i else [], "verify": "true"}
        for i in range(n)
    ]
    actor = {
        f"s{i}": [{"tool_calls": [
            {"name": "run_shell", "args": {"command": "true"}},
            {"name": "finish_step", "args": {"summary": "ok"}},
        ]}]
        for i in range(n)
    }
    return Script.model_validate({
        "goal": "do nothing, carefully",
        "responses": {
            "planner": [{"tool_calls": [{"name": "submit_plan", "args": {"steps": steps}}]}],
            "actor": actor,
            "summarizer": [{"tool_calls": [{"name": "submit_summary", "args": {"text": "nothing"}}]}],
        },
    })


def one_run(n: int, ws: Path) -> tuple[float, float, float, dict[str, int]]:
    """Wall, model and exec seconds of one run of n steps on `ws`, and the calls counted."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        config = load_config(home, overrides={"run": {"max_steps": n + 1}})
        model = TimedModel(script=script(n))
        boxes: list[NullSandbox] = []

        def factory(workspace: Path, *_: Any) -> NullSandbox:
            boxes.append(NullSandbox(workspace))
            return boxes[-1]

        before = dict(COUNTS)
        t = time.perf_counter()
        record = start_run(
            config,
            RunOptions(goal="noop", workspace=ws, model_spec="scripted:bench"),
            model=model,
            sandbox_factory=factory,
        )
        wall = time.perf_counter() - t
        counts = {k: COUNTS[k] - before[k] for k in COUNTS}
        if len(record.steps) != n or any(s["status"] != "done" for s in record.steps):
            msg = f"bench run did not complete: {record.status} {record.reason}"
            raise SystemExit(msg)
        return wall, model.seconds, sum(b.seconds for b in boxes), counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", type=int, default=5)
    parser.add_argument("--long", type=int, default=45)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--files", type=int, default=200, help="files in the workspace (0: empty workspace)")
    parser.add_argument("--file-kib", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        fill(ws, args.files, args.file_kib)
        # Runs change nothing in the workspace, so they share it. Files changed within
        # RACY_NS of a scan are hashed again at every scan; in a real run most are older.
        deadline = time.monotonic() + getattr(manifest_mod, "RACY_NS", 0) / 1e9
        one_run(2, ws)  # warm imports and caches
        time.sleep(max(0.0, deadline - time.monotonic()))
        report(args, [(one_run(args.short, ws), one_run(args.long, ws)) for _ in range(args.repeat)])


def report(args: argparse.Namespace, pairs: list[tuple[Any, Any]]) -> None:
    per_step, model_ms, exec_ms = [], [], []
    counts: dict[str, float] = {}
    steps = args.long - args.short
    for (w1, m1, e1, c1), (w2, m2, e2, c2) in pairs:
        per_step.append(((w2 - m2 - e2) - (w1 - m1 - e1)) / steps * 1000)
        model_ms.append((m2 - m1) / steps * 1000)
        exec_ms.append((e2 - e1) / steps * 1000)
        counts = {k: (c2[k] - c1[k]) / steps for k in c2}
    median = statistics.median(per_step)
    tmp = Path(tempfile.gettempdir()).resolve()
    print(
        f"steps per run: {args.short} and {args.long}, repeats: {args.repeat}; a step = 1 actor turn, 1 command, "
        "finish_step"
    )
    print(
        f"workspace: {args.files} files of {args.file_kib} KiB; temp dir {tmp} ({fs_type(tmp)}), {os.cpu_count()} "
        f"CPUs, load {os.getloadavg()[0]:.2f}"
    )
    print("per step: " + ", ".join(f"{v:g} {k}" for k, v in counts.items()))
    print(f"model time per step (excluded): {statistics.median(model_ms):.2f} ms")
    print(
        f"exec time per step (excluded):  {statistics.median(exec_ms):.3f} ms (null sandbox; a docker exec is not "
        "included)"
    )
    print(f"runtime overhead per step: median {median:.2f} ms (min {min(per_step):.2f}, max {max(per_step):.2f})")
    print(f"target <= {TARGET_MS:.0f} ms: {'met' if median <= TARGET_MS else 'NOT met'}")


if __name__ == "__main__":
    main()
