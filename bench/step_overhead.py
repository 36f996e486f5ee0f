"""Runtime overhead per step, without model or command time.

Runs the real runner (graph, SQLite checkpoints after every node, fsynced
journal, guardian, workspace manifests, gate) on scripted plans of N trivial
steps, with a null sandbox that answers at once and a scripted model. Model
and exec time are measured and subtracted; the per-step figure is the slope
between a short and a long plan, so per-run costs (plan, summary, gate) drop
out. Target: median <= 15 ms per step.

    .venv/bin/python bench/step_overhead.py [--short 5] [--long 45] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# bench/ holds other benches named like packages (bench/sandbox.py): keep it off the path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from runtime.config import load_config  # noqa: E402
from runtime.runner import RunOptions, start_run  # noqa: E402
from runtime.scripted import Script, ScriptedChatModel  # noqa: E402
from sandbox.base import ExecResult  # noqa: E402

TARGET_MS = 15.0


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
    steps = [{"id": f"s{i}", "description": "noop", "depends_on": [f"s{i - 1}"] if i else [], "verify": "true"} for i in range(n)]
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


def one_run(n: int) -> tuple[float, float, float]:
    """Wall, model and exec seconds of one run of n steps."""
    with tempfile.TemporaryDirectory() as tmp:
        home, ws = Path(tmp) / "home", Path(tmp) / "ws"
        ws.mkdir()
        config = load_config(home, overrides={"run": {"max_steps": n + 1}})
        model = TimedModel(script=script(n))
        boxes: list[NullSandbox] = []

        def factory(workspace: Path, *_: Any) -> NullSandbox:
            boxes.append(NullSandbox(workspace))
            return boxes[-1]

        t = time.perf_counter()
        record = start_run(config, RunOptions(goal="noop", workspace=ws, model_spec="scripted:bench"), model=model, sandbox_factory=factory)
        wall = time.perf_counter() - t
        if len(record.steps) != n or any(s["status"] != "done" for s in record.steps):
            msg = f"bench run did not complete: {record.status} {record.reason}"
            raise SystemExit(msg)
        return wall, model.seconds, sum(b.seconds for b in boxes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", type=int, default=5)
    parser.add_argument("--long", type=int, default=45)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    one_run(2)  # warm imports and caches
    per_step, model_ms, exec_ms = [], [], []
    for _ in range(args.repeat):
        w1, m1, e1 = one_run(args.short)
        w2, m2, e2 = one_run(args.long)
        steps = args.long - args.short
        per_step.append(((w2 - m2 - e2) - (w1 - m1 - e1)) / steps * 1000)
        model_ms.append((m2 - m1) / steps * 1000)
        exec_ms.append((e2 - e1) / steps * 1000)
    median = statistics.median(per_step)
    print(f"steps per run: {args.short} and {args.long}, repeats: {args.repeat}")
    print(f"model time per step (excluded): {statistics.median(model_ms):.2f} ms")
    print(f"exec time per step (excluded):  {statistics.median(exec_ms):.3f} ms")
    print(f"runtime overhead per step: median {median:.2f} ms (min {min(per_step):.2f}, max {max(per_step):.2f})")
    print(f"target <= {TARGET_MS:.0f} ms: {'met' if median <= TARGET_MS else 'NOT met'}")


if __name__ == "__main__":
    main()
