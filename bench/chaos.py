"""Chaos bench: random SIGKILL/SIGTERM/SIGINT of run, resume, approve and memory rebuild, then invariants.

Each round starts one `tether` command in a child process (a run of a
scenario, an approval, a memory rebuild), sends it a random signal after a
random delay, then drives every run to its end with plain `resume`/`approve`
(`--from-journal` when a checkpoint is gone). At the end it checks:

- each side effect once: every journaled command result at most once, each
  workspace's append-only file holds its line once, each lesson revised at
  most once per run;
- journals without duplicates: unique keys, one run_end per attempt;
- memory files parse, and the index agrees with them (items counted both ways);
- no container of these runs left;
- every lent workspace (root-owned) has root's ownership back.

Prints its figures; `python bench/chaos.py --rounds 30 --seed 1`.
Needs Docker and the tiny image (`tether sandbox build --tiny`).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tether.runtime.run.settle import FINAL  # noqa: E402 - every status a run ends in (self-verified included)

SCENARIOS = {
    "append": ROOT / "tests" / "graphs" / "scenarios" / "append-then-sleep.yaml",
    "greet": ROOT / "examples" / "verified-success.yaml",
    "ask": ROOT / "tests" / "graphs" / "scenarios" / "pip-ask.yaml",
}
SIGNALS = {"SIGKILL": signal.SIGKILL, "SIGTERM": signal.SIGTERM, "SIGINT": signal.SIGINT}


class Chaos:
    """One home, many workspaces, one random stream."""

    def __init__(self, home: Path, image: str, seed: int) -> None:
        self.home, self.rng = home, random.Random(seed)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")} | {
            "PYTHONPATH": str(ROOT), "TETHER_HOME": str(home), "TETHER_SANDBOX__IMAGE": image,
            "TETHER_SANDBOX__DEFAULT_TIMEOUT_S": "30"}
        self.workspaces: dict[str, tuple[Path, str]] = {}
        """run id -> (workspace, scenario)."""
        self.figures: collections.Counter[str] = collections.Counter()
        self.tracebacks: list[str] = []

    def tether(self, *args: str, kill: tuple[str, Any] | None = None) -> tuple[int, str]:
        """Run the CLI; with `kill` (signal, moment), send that signal once `moment()` is true (if it still runs)."""
        proc = subprocess.Popen([sys.executable, "-m", "tether", *args], env=self.env, cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if kill is not None:
            deadline = time.monotonic() + 60
            while proc.poll() is None and time.monotonic() < deadline and not kill[1]():
                time.sleep(0.02)
            if proc.poll() is None:
                proc.send_signal(SIGNALS[kill[0]])
                self.figures[f"signalled {kill[0]} {args[0]}{' ' + args[1] if args[0] == 'memory' else ''}"] += 1
        try:
            _, err = proc.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        if "Traceback" in err:
            self.tracebacks.append(f"tether {' '.join(args[:2])}: {err[-600:]}")
        return proc.returncode, err

    def moment(self, run_id: str | None = None) -> Any:
        """A random point of a command's work: after k more journal lines of a run, or in its memory phase."""
        k = self.rng.randint(0, 30)
        in_memory = self.rng.random() < 0.25
        known = set(self._runs())

        def journal() -> Path | None:
            if run_id is not None:
                return self.home / "runs" / run_id / "journal.jsonl"
            fresh = set(self._runs()) - known
            return self.home / "runs" / fresh.pop() / "journal.jsonl" if fresh else None

        start = _lines(journal()) if run_id else 0

        def now() -> bool:
            path = journal()
            if path is None:
                return False
            if in_memory:
                return (self.home / "memory" / "runs" / path.parent.name / "trajectory.md").exists()
            return _lines(path) - start >= k

        return now

    def new_run(self, kill: tuple[str, float]) -> None:
        name = self.rng.choice(["append", "greet", "ask"])
        ws = Path(tempfile.mkdtemp(prefix="ws-", dir=self.home.parent))
        before = set(self._runs())
        extra = ["--ask-later"] if name == "ask" else []
        self.tether("run", "--model", f"scripted:{SCENARIOS[name]}", "-w", str(ws), *extra, kill=kill)
        for run_id in set(self._runs()) - before:
            self.workspaces[run_id] = (ws, name)

    def _runs(self) -> list[str]:
        folder = self.home / "runs"
        return [p.name for p in folder.iterdir()] if folder.is_dir() else []

    def meta(self, run_id: str) -> dict[str, Any] | None:
        try:
            return json.loads((self.home / "runs" / run_id / "run.json").read_text())
        except (OSError, ValueError):
            return None

    def step(self, run_id: str, kill: tuple[str, float] | None) -> None:
        """One move towards the end of a run: approve what it waits on, or resume it."""
        meta = self.meta(run_id)
        if meta is None:
            return
        if meta.get("awaiting"):
            self.tether("approve", run_id, kill=kill)
            return
        code, err = self.tether("resume", run_id, kill=kill)
        if code == 2 and "--from-journal" in err:
            self.figures["restarted from the journal"] += 1
            self.tether("resume", run_id, "--from-journal", kill=kill)

    def done(self, run_id: str) -> bool:
        meta = self.meta(run_id)
        return bool(meta and meta["status"] in FINAL and (self.home / "runs" / run_id / "effects.json").is_file())

    def round(self) -> None:
        sig = self.rng.choice(list(SIGNALS))
        pending = [r for r in self.workspaces if not self.done(r) and self.meta(r) is not None]
        what = self.rng.choice(["run", "run", "continue", "rebuild"] if pending else ["run", "run", "rebuild"])
        if what == "run":
            self.new_run((sig, self.moment()))
        elif what == "continue":
            run_id = self.rng.choice(pending)
            self.step(run_id, (sig, self.moment(run_id)))
        else:
            at = time.monotonic() + self.rng.uniform(1.0, 4.0)
            self.tether("memory", "rebuild", kill=(sig, lambda: time.monotonic() >= at))

    def settle(self) -> None:
        """Drive every run to its end without signals."""
        for run_id in list(self.workspaces):
            if self.meta(run_id) is None:
                self.figures["killed before run.json (folder reported by resume)"] += 1
                code, err = self.tether("resume", run_id)
                if code != 2 or "no run.json" not in err:
                    self.figures["VIOLATION folder without run.json not recognised"] += 1
                continue
            for _ in range(6):
                if self.done(run_id):
                    break
                self.figures["resumes to finish"] += 1
                self.step(run_id, None)
            self.figures[f"final {(self.meta(run_id) or {}).get('status')}"] += 1


def _lines(path: Path | None) -> int:
    try:
        return path.read_bytes().count(b"\n") if path else 0
    except OSError:
        return 0


def check(chaos: Chaos) -> collections.Counter[str]:
    """Count every broken invariant (all zero is a pass)."""
    from tether.common.events import ExecFinished, RunEnded, RunStarted, read_events
    from tether.memory.config import MemoryConfig
    from tether.memory.lesson import lesson_from_markdown
    from tether.memory.store import MemoryStore

    bad: collections.Counter[str] = collections.Counter()
    for run_id, (ws, name) in chaos.workspaces.items():
        path = chaos.home / "runs" / run_id / "journal.jsonl"
        if not path.exists():
            continue
        keys = [json.loads(line).get("key") for line in path.read_text().splitlines() if line.strip().startswith("{")]
        bad["duplicate journal keys"] += len(keys) - len(set(keys))
        events = read_events(path)
        results = collections.Counter(e.cmd_id for e in events if isinstance(e, ExecFinished))
        bad["command results journaled twice"] += sum(n - 1 for n in results.values() if n > 1)
        if sum(isinstance(e, RunEnded) for e in events) > sum(isinstance(e, RunStarted) for e in events):
            bad["more run_end than attempts"] += 1
        if not chaos.done(run_id):
            bad["run not finished after resume"] += 1
        if name == "append" and (ws / "log.txt").exists() and (ws / "log.txt").read_text() != "once\n":
            bad["append ran twice"] += 1
        if os.geteuid() == 0:
            owners = {(p.stat().st_uid, p.stat().st_gid) for p in [ws, *ws.rglob("*")]}
            bad["workspace owner not restored"] += int(owners != {(0, 0)})
    memory = chaos.home / "memory"
    if memory.is_dir():
        for lesson_path in (memory / "lessons").glob("*.md"):
            try:
                lesson = lesson_from_markdown(lesson_path.read_text(), lesson_path)
            except Exception:  # any parse failure is the finding
                bad["lesson file does not parse"] += 1
                continue
            runs = collections.Counter(h.run_id for h in lesson.history if h.run_id)
            bad["lesson revised twice by one run"] += sum(n - 1 for n in runs.values() if n > 1)
        store = MemoryStore(memory, MemoryConfig())
        with store.session():
            indexed = store.index.count()
            expected = len([x for x in store.lessons() if x.status == "live"]) + len(
                [r for r in store.rules() if r.status == "live"]) + len(store.runs())
        bad["index disagrees with the markdown"] += int(indexed != expected)
    import docker

    client = docker.from_env()
    # the API's own listing: containers.list() inspects each one, and on a shared engine another process's
    # container may be gone by then (docker.errors.NotFound)
    left = [c for c in client.api.containers(all=True, filters={"label": "tether.sandbox=1"})
            if (c.get("Labels") or {}).get("tether.run") in chaos.workspaces]
    bad["containers left"] += len(left)
    bad["tracebacks"] += len(chaos.tracebacks)
    return bad


def run_chaos(
    rounds: int, seed: int, image: str, base: Path
) -> tuple[collections.Counter[str], collections.Counter[str], float]:
    """(figures, broken invariants, seconds) of `rounds` rounds in a fresh home under `base`."""
    home = Path(tempfile.mkdtemp(prefix="chaos-", dir=base)) / "home"
    chaos = Chaos(home, image, seed)
    start = time.monotonic()
    for _ in range(rounds):
        chaos.round()
    chaos.settle()
    bad = check(chaos)
    for tb in chaos.tracebacks:
        print(tb, file=sys.stderr)
    return chaos.figures, bad, time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--image", default="tether-sandbox:tiny")
    parser.add_argument("--base", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    figures, bad, seconds = run_chaos(args.rounds, args.seed, args.image, args.base)
    print(f"chaos: {args.rounds} rounds, seed {args.seed}, {seconds:.0f} s")
    for key, n in sorted(figures.items()):
        print(f"  {key:55} {n:5d}")
    print("invariants (0 = held):")
    for key in ("duplicate journal keys", "command results journaled twice", "more run_end than attempts",
                "run not finished after resume", "append ran twice", "workspace owner not restored",
                "lesson file does not parse", "lesson revised twice by one run", "index disagrees with the markdown",
                "containers left", "tracebacks"):
        print(f"  {key:55} {bad[key]:5d}")
    return 1 if sum(bad.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
