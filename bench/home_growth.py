"""A home that lasts: growth per finished run, duplicate live lessons, and recall cost at 50 vs 1,000 runs.

A generated home: each synthetic run writes a run folder (run.json and a
journal), checkpoints through the real SQLite checkpointer (a small LangGraph
graph whose state grows like a run's: about 20 super-steps, ~265 KB of
checkpoints unpruned), is pruned by the real end-of-run path
(`runtime.run.gc.prune_run`, `run.keep_checkpoints = "last"`), and goes
through the real memory cycle (trajectory, compilation, revisions, new
lessons, Qdrant embedded index) with the scripted model. A quarter of the
runs rely on a recalled lesson and revise it; some revisions rewrite a
lesson to its family's common text, which is what made live lessons share
text before memory.merge. No sandbox is started.

Printed: home growth per finished run beyond its journal (bytes of the home
minus journals, from run 50 to the end, over those runs), live lessons that
share their text, recall median at 50 runs and at the end (and the ratio),
after-run cycle median at both points, and the largest lesson file.

Run: .venv/bin/python bench/home_growth.py [--runs 1000]
"""

from __future__ import annotations

import argparse
import json
import operator
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, TypedDict

# run as a script, this folder comes first on sys.path, and bench/sandbox.py would shadow `sandbox`
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from langgraph.graph import END, START, StateGraph  # noqa: E402

from tether.common.journal import Journal  # noqa: E402
from tether.memory.cycle import MemoryCycle  # noqa: E402
from tether.memory.run import GateSummary, RunRecord, Turn  # noqa: E402
from tether.runtime.config import load_config  # noqa: E402
from tether.runtime.models.scripted import Script, ScriptedChatModel  # noqa: E402
from tether.runtime.run.checkpoints import JournalFirstSaver, connect  # noqa: E402
from tether.runtime.run.gc import prune_run  # noqa: E402

FAMILIES = ["sort", "deps", "json", "git", "docs", "lint", "build", "db"]
WORDS = ("input output file folder column row header branch tag commit test module package version config "
         "encoding newline order field record table query index cache lock path script shell flag value").split()
STEPS = 20
ENTRY_BYTES = 1200
GOALS = [f"Fix the {w} handling of the {f} task" for f in FAMILIES for w in ("input", "config", "order")]


class State(TypedDict, total=False):
    run_id: str
    log: Annotated[list[str], operator.add]
    steps: dict[str, str]
    status: str


def _step(state: State) -> dict[str, Any]:
    n = len(state.get("log") or [])
    return {"log": [f"turn {n}: " + "x" * ENTRY_BYTES], "steps": {**(state.get("steps") or {}), f"s{n}": "done"}}


def _end(state: State) -> dict[str, Any]:  # noqa: ARG001
    return {"status": "success"}


def graph(saver: Any) -> Any:
    g = StateGraph(State)
    g.add_node("step", _step)
    g.add_node("end", _end)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: "end" if len(s["log"]) >= STEPS else "step")
    g.add_edge("end", END)
    return g.compile(checkpointer=saver)


def insight(rng: random.Random, fam: str) -> str:
    return f"In {fam} tasks, check the " + " and the ".join(rng.sample(WORDS, 4)) + " before changing anything."


def common(fam: str) -> str:
    return f"In {fam} tasks, read the error output fully before the next command."


def record(i: int, rng: random.Random, cite: str | None) -> RunRecord:
    fam = FAMILIES[i % len(FAMILIES)]
    goal = f"Fix the {rng.choice(WORDS)} handling of the {fam} task number {i}"
    why = f"Per {cite}, check first." if cite else "Look first."
    turns = [Turn(step="s1", reasoning=why, command="ls -la", exit_code=0, output="total 8\n" * 10),
             Turn(step="s1", reasoning="read the error output fully before the next command", command=f"make {fam}",
                  exit_code=0, output="ok\n" * 20)]
    return RunRecord(run_id=f"run-{i:04d}", goal=goal, outcome="success", turns=turns,
                     gate=GateSummary(passed=True, failed=[]))


def model(i: int, rng: random.Random, fam: str) -> ScriptedChatModel:
    new = {"lessons": [{"title": f"{fam} checks {i}", "insight": insight(rng, fam), "applicability": f"{fam} tasks"}]}
    if i % 3 == 0:
        revise = {"verdict": "confirmed", "evidence": ["ls -la"], "lesson": ""}
    else:  # rewrite to the family's common text: the revisions that used to leave duplicates
        revise = {"verdict": "outdated", "evidence": ["read the error output fully before the next command"],
                  "lesson": common(fam), "applicability": f"{fam} tasks"}
    script = Script.model_validate({"responses": {
        "compile": ["- Key decision: listed the workspace first."],
        "lessons": [json.dumps(new)], "revise": [json.dumps(revise)]}})
    return ScriptedChatModel(script=script)


def home_bytes(home: Path) -> tuple[int, int]:
    """(all bytes of the home, bytes of the runs' journals)."""
    total = journals = 0
    for p in home.rglob("*"):
        if p.is_file():
            size = p.stat().st_size
            total += size
            journals += size if p.name == "journal.jsonl" else 0
    return total, journals


def timed_recall(cycle: MemoryCycle) -> float:
    times = []
    for _ in range(3):
        for goal in GOALS:
            t = time.perf_counter()
            cycle.read(goal)
            times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--at", type=int, default=50, help="the early point recall is compared with")
    parser.add_argument("--keep", type=Path, default=None,
                        help="generate the home in this (new) folder and keep it, to profile or inspect afterwards")
    args = parser.parse_args()
    rng = random.Random(20)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    with tempfile.TemporaryDirectory() as tmp:
        d = str(args.keep.resolve()) if args.keep else tmp
        home = Path(d) / "home"
        config = load_config(home, environ={}, cwd=Path(d))
        cycle = MemoryCycle(config.memory_dir, config.memory, clock=lambda: now)
        conn = connect(config.checkpoint_db)
        early: dict[str, float] = {}
        cycles: list[float] = []
        unpruned = []
        started = time.perf_counter()
        for i in range(args.runs):
            now += timedelta(hours=2)
            fam = FAMILIES[i % len(FAMILIES)]
            run_id = f"run-{i:04d}"
            run_dir = config.runs_dir / run_id
            run_dir.mkdir(parents=True)
            (run_dir / "run.json").write_text(json.dumps({"run_id": run_id, "goal": fam, "workspace": d,
                                                          "model_spec": "scripted:x", "status": "success"}))
            journal = Journal(run_dir / "journal.jsonl")
            (run_dir / "journal.jsonl").write_text("".join(json.dumps({"type": "note", "n": n, "pad": "y" * 300})
                                                           + "\n" for n in range(STEPS * 4)))
            graph(JournalFirstSaver(conn, journal)).invoke({"run_id": run_id}, {"configurable": {"thread_id": run_id}})
            if i < 3:
                unpruned.append(sum(r[0] for r in conn.execute(
                    "SELECT length(checkpoint) + length(metadata) FROM checkpoints WHERE thread_id = ?", (run_id,))))
            prune_run(config, run_id)
            goal = record(i, rng, None).goal
            recall = cycle.read(goal)
            cite = recall.lessons[0].id if recall.lessons and i % 4 == 0 else None
            t = time.perf_counter()
            cycle.after_run(record(i, rng, cite), model(i, rng, fam), recall)
            cycles.append(time.perf_counter() - t)
            if i + 1 == args.at:
                early = {"recall": timed_recall(cycle), "cycle": statistics.median(cycles[-args.at:]),
                         "bytes": home_bytes(home)}
        conn.close()
        late_recall, late_cycle = timed_recall(cycle), statistics.median(cycles[-args.at:])
        total, journals = home_bytes(home)
        e_total, e_journals = early["bytes"]
        growth = ((total - journals) - (e_total - e_journals)) / (args.runs - args.at)
        live = [x for x in cycle.store.lessons() if x.status == "live"]
        texts: dict[str, list[str]] = {}
        for x in live:
            texts.setdefault(" ".join(x.insight.lower().split()), []).append(x.id)
        shared = sum(len(ids) for ids in texts.values() if len(ids) > 1)
        lessons = sorted(config.memory_dir.glob("lessons/*.md"), key=lambda p: p.stat().st_size)
        db = config.checkpoint_db.stat().st_size
        print(f"runs: {args.runs} finished ({time.perf_counter() - started:.0f} s to generate); "
              f"checkpoints per run before pruning {statistics.mean(unpruned) / 1024:.0f} KB")
        print(f"home: {total / 1024:,.0f} KB, of which journals {journals / 1024:,.0f} KB, checkpoint database "
              f"{db / 1024:,.0f} KB")
        print(f"growth per finished run beyond its journal (runs {args.at}..{args.runs}): {growth / 1024:.1f} KB "
              f"(bound 50 KB)")
        print(f"live lessons: {len(live)}, sharing their text with another: {shared} (bound 0); retired "
              f"{sum(x.status == 'retired' for x in cycle.store.lessons())}")
        print(f"largest lesson file: {lessons[-1].stat().st_size / 1024:.1f} KB "
              f"({len(list(config.memory_dir.glob('lessons/history/*.md')))} history archives)")
        print(f"recall median: {early['recall'] * 1000:.1f} ms at {args.at} runs, {late_recall * 1000:.1f} ms at "
              f"{args.runs}: ratio {late_recall / early['recall']:.2f}x (bound 1.2x)")
        print(f"after-run cycle median: {early['cycle'] * 1000:.0f} ms at {args.at} runs, {late_cycle * 1000:.0f} ms "
              f"at {args.runs}: ratio {late_cycle / early['cycle']:.2f}x")


if __name__ == "__main__":
    main()
