"""Gate time as a share of run time, on the real engine.

Runs `tether run` (scripted model, real Docker sandbox, real runner) on the
bundled examples and on a 200-file project in which the model fixes one
file and the person gives `--verify 'bash test.sh'`. The gate now re-runs
every check in a fresh shell and again in a second sandbox on the pre-run
copy, lists /tmp and scans the written files for secrets; its time is read
from the journal (summary written -> gate recorded), the run's from its
start and end events. Both of the gate's sandboxes start warm beside the
run's own (gate.warm): `warm` counts the sides the gate took warm per run (2
of 2 is the aim); the pre-run copies' time is spent then, not in the gate,
and the after copy is made from one, writing only what the run changed.

    .venv/bin/python bench/gate_share.py [--image tether-sandbox:tiny] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

# bench/ holds other benches named like packages (bench/sandbox.py): keep it off the path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from tether.common.events import GateRecorded, RunEnded, RunStarted, SummaryWritten, read_events  # noqa: E402
from tether.runtime.cli.app import app  # noqa: E402

PARTS = {"list_processes": "processes", "rerun": "checks", "build_before": "pre-run copy", "build_after": "after copy",
         "file_secrets": "secrets",
         "outside_files": "/tmp list"}
SPENT: dict[str, float] = {}


def _timed(name: str, fn):  # noqa: ANN001, ANN202 - wraps the gate's parts to split its time
    def wrapper(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            SPENT[name] = SPENT.get(name, 0.0) + time.perf_counter() - start
    return wrapper


def _wrap_everywhere() -> None:
    """Time each part wherever a gate module holds it (modules import the parts by name from their home)."""
    import importlib
    import pkgutil

    import tether.gate

    modules = [importlib.import_module(m.name)
               for m in pkgutil.walk_packages(tether.gate.__path__, prefix="tether.gate.") if not m.ispkg]
    for name in PARTS:
        originals = {id(getattr(m, name)): getattr(m, name) for m in modules if callable(getattr(m, name, None))}
        wrapped = {key: _timed(name, fn) for key, fn in originals.items()}
        for m in modules:
            fn = getattr(m, name, None)
            if callable(fn) and id(fn) in wrapped:
                setattr(m, name, wrapped[id(fn)])


_wrap_everywhere()
WARM: list[int] = []


def _count_warm() -> None:
    """Count the sides each gate took warm (gate.warm.WarmSides.used, read when the run closes them)."""
    from tether.gate.warm import WarmSides

    close = WarmSides.close

    def counted(self: WarmSides) -> None:
        close(self)
        WARM.append(len(self.used))
    WarmSides.close = counted  # type: ignore[method-assign]


_count_warm()

GOOD = "printf '#!/bin/bash\\necho \"hello, ${1:-world}\"\\n' > greet.sh"
PROJECT_SCRIPT = {
    "goal": 'Fix greet.sh so that it prints "hello, NAME" for its first argument; test.sh checks it.',
    "responses": {
        "planner": [
            {
                "tool_calls": [
                    {
                        "name": "submit_plan",
                        "args": {
                            "steps": [
                                {"id": "fix", "description": "fix greet.sh", "depends_on": [], "verify": "bash test.sh"}
                            ]
                        },
                    }
                ]
            }
        ],
        "actor": {
            "fix": [
                {
                    "tool_calls": [
                        {"name": "run_shell", "args": {"command": "cat greet.sh test.sh"}},
                        {"name": "run_shell", "args": {"command": GOOD}},
                        {"name": "run_shell", "args": {"command": "bash test.sh"}},
                        {
                            "name": "finish_step",
                            "args": {
                                "summary": "fixed",
                                "files_read": ["greet.sh", "test.sh"],
                                "files_changed": ["greet.sh"],
                            },
                        },
                    ]
                }
            ]
        },
        "summarizer": [
            {
                "tool_calls": [
                    {
                        "name": "submit_summary",
                        "args": {
                            "text": "greet.sh fixed",
                            "files": ["greet.sh"],
                            "commands": ["bash test.sh"],
                            "claims": [{"text": "test passes", "command": "bash test.sh"}],
                        },
                    }
                ]
            }
        ],
    },
}
TEST_SH = 'out=$(bash greet.sh tether)\n[ "$out" = "hello, tether" ] || { echo "FAIL: $out"; exit 1; }\n'


def project(workspace: Path, files: int = 200) -> None:
    """A 200-file project: source folders of 4 KiB files, a broken greet.sh and its test."""
    for i in range(files - 2):
        path = workspace / f"src/pkg{i // 20}/mod{i}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"module {i}\n" + "x" * 4000 + "\n")
    (workspace / "greet.sh").write_text("echo hi\n")
    (workspace / "test.sh").write_text(TEST_SH)


def one_run(script: Path, image: str, setup: bool, verify: list[str]) -> tuple[float, float, str, int]:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        if setup:
            project(ws)
        home = Path(tmp) / "home"
        args = [
            "run",
            "--model",
            f"scripted:{script}",
            "--workspace",
            str(ws),
            "--no-memory",
            "--json",
            "--home",
            str(home),
        ]
        args += [a for v in verify for a in ("--verify", v)]
        result = CliRunner().invoke(app, args, env={"TETHER_SANDBOX__IMAGE": image})
        if not result.stdout.strip():
            msg = f"{script.name}: no result ({result.exit_code}): {result.output[-2000:]}"
            raise SystemExit(msg)
        out = json.loads(result.stdout)
        events = read_events(home / "runs" / out["run_id"] / "journal.jsonl")
        start = next(e.ts for e in events if isinstance(e, RunStarted))
        end = next(e.ts for e in events if isinstance(e, RunEnded))
        summary = next(e.ts for e in events if isinstance(e, SummaryWritten))
        gate = next(e for e in events if isinstance(e, GateRecorded))
        failed = ",".join(k for k, v in out["gate"].items() if v["status"] == "fail")
        status = out["status"] + (f" ({failed})" if failed else "")
        return end - start, gate.ts - summary, status, len([c for c in gate.checks if c.get("after_exit") is not None])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", default="tether-sandbox:tiny")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        proj = Path(tmp) / "project.yaml"
        proj.write_text(yaml.safe_dump(PROJECT_SCRIPT))
        cases = [
            (ROOT / "examples" / n, False, [])
            for n in ("verified-success.yaml", "cascade-repair.yaml", "unverified-claim.yaml")
        ]
        cases.append((proj, True, ["bash test.sh"]))
        print(f"image {args.image}, median of {args.repeat} runs each")
        print(
            f"{'run':<26} {'status':<22} {'checks':>6} {'warm':>4} {'run s':>7} {'gate s':>7} {'gate share':>10}"
            "   gate parts (s, mean; checks include the pre-run side)"
        )
        for script, setup, verify in cases:
            SPENT.clear()
            WARM.clear()
            runs = [one_run(script, args.image, setup, verify) for _ in range(args.repeat)]
            parts = ", ".join(f"{label} {SPENT.get(name, 0) / args.repeat:.2f}" for name, label in PARTS.items())
            total = statistics.median(r[0] for r in runs)
            gate = statistics.median(r[1] for r in runs)
            name = "200-file project" if setup else script.stem
            print(
                f"{name:<26} {'/'.join(sorted({r[2] for r in runs})):<22} {runs[0][3]:>6} "
                f"{min(WARM, default=0):>2}/2 {total:>7.2f} {gate:>7.2f} "
                f"{gate / total:>9.0%}   {parts}"
            )


if __name__ == "__main__":
    main()
