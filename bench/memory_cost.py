"""Model calls and tokens the memory cycle adds per task, against retrieval alone.

A small synthetic series of tasks (four families, some failing with repeated
errors) runs through the real cycle with the scripted model. The agent itself
is simulated by scripted `actor` calls whose input is a system prompt, the
recall block and the growing history of turns, so its tokens are counted the
same way (4 characters a token). Retrieval-only = those agent calls with the
recall block; full cycle = the same plus every memory call (compile, revise,
lessons, rule). ReHarness reports its full cycle at about 3x retrieve-similar.

Run: .venv/bin/python bench/memory_cost.py [--tasks 16]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

# run as a script, this folder comes first on sys.path, and bench/sandbox.py would shadow `sandbox`
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from tether.memory.config import MemoryConfig  # noqa: E402
from tether.memory.cycle import MemoryCycle  # noqa: E402
from tether.memory.run import FailedCommand, GateSummary, RunRecord, Turn  # noqa: E402
from tether.runtime.models.scripted import ScriptedChatModel  # noqa: E402

SYSTEM_PROMPT_CHARS = 12_000  # ~3k tokens of agent instructions and tool schemas
TURNS = 8
FAMILIES = {
    "sort": (
        "Sort the numbers in {f}.txt in {o} order",
        "sort -n {f}.txt",
        "sort: invalid number at line 3 of /work/{f}.txt",
    ),
    "deps": (
        "Install the dependencies of project {f} and run its tests",
        "pip install -r requirements.txt",
        "ERROR: Could not find a version that satisfies the requirement foo==9.9",
    ),
    "json": (
        "Extract the email field from {f}.json into a csv",
        "jq -r '.[] | .email' {f}.json",
        'jq: error (at /work/{f}.json:12): Cannot index string with "email"',
    ),
    "git": (
        "Create a release branch for {f} and tag it",
        "git checkout -b release-{f}",
        "fatal: a branch named 'release' already exists",
    ),
}


def task(i: int) -> tuple[str, str, RunRecord]:
    fam = list(FAMILIES)[i % len(FAMILIES)]
    goal_t, cmd_t, err_t = FAMILIES[fam]
    name = f"{fam}{i}"
    goal = goal_t.format(f=name, o="ascending" if i % 2 else "descending")
    failed = i % 3 == 2 or i % 5 == 4
    turns = [
        Turn(
            step="s1", reasoning="Look at the workspace first.", command="ls -la", exit_code=0, output="total 8\n" * 20
        )
    ]
    for t in range(1, TURNS):
        cmd = cmd_t.format(f=name) if t == 1 else f"cat notes-{t}.txt"
        err = failed and t == 1
        turns.append(Turn(step=f"s{t}", reasoning=f"Step {t} of the plan for {fam}; check the result before moving on.",
                          command=cmd, exit_code=1 if err else 0,
                          output=(err_t.format(f=name) if err else f"ok line {t}\n" * 15)))
    rec = RunRecord(
        run_id=f"run-{i:03d}",
        goal=goal,
        outcome="failure" if failed else "success",
        turns=turns,
        gate=GateSummary(passed=not failed, failed=["R08"] if failed else []),
        failed_commands=[FailedCommand(tool=cmd_t.split()[0], command=cmd_t.format(f=name), error=err_t.format(f=name))]
        if failed
        else [],
    )
    return fam, name, rec


def script(tmp: Path, n: int) -> ScriptedChatModel:
    lessons = {}
    for i in range(n):
        fam, name, rec = task(i)
        insight = f"For {fam} tasks like {name}, list the workspace with `ls -la` before the first change."
        lessons[rec.run_id] = [json.dumps({"lessons": [{"title": f"{fam} {name}", "insight": insight,
                                                        "applicability": f"{fam} tasks"}]})]
    revise = json.dumps({"verdict": "confirmed", "evidence": ["ls -la"], "lesson": ""})
    data = {"responses": {
        "compile": ["- Key decision: listed the workspace first; then ran the family's main command."],
        "revise": [revise], "lessons": lessons, "rule": ["Check the input before re-running the same command."],
        "actor": ["I will run the next command and check its output carefully before continuing." * 3],
    }}
    path = tmp / "cost.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return ScriptedChatModel.from_file(path)


def agent_tokens(model: ScriptedChatModel, recall_prompt: str, rec: RunRecord) -> tuple[int, int]:
    """Simulated actor calls of one task: (calls, tokens)."""
    before = len(model.calls)
    history = ""
    for turn in rec.turns:
        user = f"{recall_prompt}\n\nGoal: {rec.goal}\n{history}"
        model.invoke([("system", "x" * SYSTEM_PROMPT_CHARS), ("user", user)],
                     config={"metadata": {"tether_site": "actor", "tether_key": rec.run_id, "tether_turn": 0}})
        history += f"\n$ {turn.command}\n{turn.output}"
    calls = model.calls[before:]
    return len(calls), sum(c["input_tokens"] + c["output_tokens"] for c in calls)


def rule_drift(trials: int = 2000, horizon: int = 100) -> None:
    """The +0.03 / -0.05 asymmetry: where rules end up, by the success rate of the tasks they apply to."""
    import random
    import statistics

    from tether.memory.rule import Application, fold_confidence

    cfg, rng = MemoryConfig(), random.Random(5)
    print(f"rule confidence walk (start {cfg.rule_initial_confidence}, +{cfg.rule_success_delta} / "
          f"-{cfg.rule_failure_delta}, inject >= {cfg.rule_inject_threshold}, retire < {cfg.rule_retire_below}), "
          f"{trials} walks of up to {horizon} applications:")
    for p in (0.5, 0.6, 0.625, 0.7, 0.8, 0.9):
        promoted, retired, to_promote = 0, 0, []
        for _ in range(trials):
            c = cfg.rule_initial_confidence
            for n in range(1, horizon + 1):  # fold_confidence, one application at a time
                outcome = "success" if rng.random() < p else "failure"
                c = fold_confidence(
                    [Application(run="x", outcome=outcome)], cfg.model_copy(update={"rule_initial_confidence": c})
                )
                if c >= cfg.rule_inject_threshold:
                    promoted += 1
                    to_promote.append(n)
                    break
                if c < cfg.rule_retire_below:
                    retired += 1
                    break
        median = f"{statistics.median(to_promote):.0f}" if to_promote else "-"
        print(f"  task success rate {p:.3f}: promoted {promoted / trials:5.1%} (median after {median} applications), "
              f"retired {retired / trials:5.1%}, drift {0.08 * p - 0.05:+.4f} per application")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=16)
    args = parser.parse_args()
    now = datetime(2026, 3, 1, tzinfo=UTC)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        model = script(tmp, args.tasks)
        cycle = MemoryCycle(tmp / "memory", MemoryConfig(rule_trial_rate=0.2), clock=lambda: now)
        agent_calls = agent_tok = recall_tok = mem_tok = retrieved = used = 0
        sites: Counter[str] = Counter()
        revise_tokens = []
        for i in range(args.tasks):
            now += timedelta(hours=6)
            fam, name, rec = task(i)
            recall = cycle.read(rec.goal)
            if recall.lessons and i % 2 == 0:  # the agent relies on (cites) the top lesson in half the tasks
                rec.turns[0].reasoning += f" Per {recall.lessons[0].id}, list the workspace first."
            c, t = agent_tokens(model, recall.prompt(), rec)
            agent_calls, agent_tok = agent_calls + c, agent_tok + t
            recall_tok += len(recall.prompt()) // 4 * len(rec.turns)
            report = cycle.after_run(rec, model, recall)
            retrieved += len(recall.lessons)
            used += len(report.used_lessons)
            for call in report.calls:
                sites[call.site] += 1
                mem_tok += call.input_tokens + call.output_tokens
                if call.site == "revise":
                    revise_tokens.append(call.input_tokens + call.output_tokens)
        n = args.tasks
        mem_calls = sum(sites.values())
        avg_revise = sum(revise_tokens) / len(revise_tokens) if revise_tokens else 0
        all_revise_tok = mem_tok + (retrieved - used) * avg_revise
        print(f"tasks: {n} ({len(FAMILIES)} families, {TURNS} turns each, about 1 in 2.5 fails)")
        print(f"retrieval-only per task: {agent_calls / n:.1f} agent calls, {agent_tok / n:,.0f} tokens "
              f"(recall block {recall_tok / n:,.0f} of them)")
        print(f"memory cycle adds per task: {mem_calls / n:.2f} calls "
              f"({', '.join(f'{k} {v / n:.2f}' for k, v in sorted(sites.items()))}), {mem_tok / n:,.0f} tokens")
        print(f"lessons retrieved {retrieved}, relied on and revised {used}, not revised {retrieved - used}")
        print(f"cost ratio full cycle / retrieval-only: {(agent_tok + mem_tok) / agent_tok:.2f}x (tokens), "
              f"{(agent_calls + mem_calls) / agent_calls:.2f}x (calls)")
        print(f"if every retrieved lesson were revised: {(agent_tok + all_revise_tok) / agent_tok:.2f}x (tokens)")
        print("ReHarness reports about 3x retrieve-similar ($254 vs $85 a run)")
        print(f"memory at the end: {len(cycle.store.lessons())} lessons, {len(cycle.store.rules())} rules")
    rule_drift()


if __name__ == "__main__":
    main()
