"""The memory folder under git: only markdown is committed, a commit per run, `memory log`, no absolute paths."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from memory_helpers import DESC_RUN, Clock, learn_desc, record

from tether.memory.config import MemoryConfig
from tether.memory.cycle import MemoryCycle
from tether.memory.history import memory_log
from tether.memory.run import parse_turns, render_trajectory
from tether.memory.store import MemoryStore

ERR = "ModuleNotFoundError: No module named 'yaml'"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          check=True, capture_output=True, text=True).stdout


def a_few_runs(cycle: MemoryCycle, scripted) -> str:
    lesson_id = learn_desc(cycle, scripted)
    model = scripted(compile=["c"] * 2, lessons=[{"lessons": []}] * 2, rule=["Install yaml before rendering."])
    for n in (1, 2):
        cycle.after_run(record(f"run-f{n}", "Render the template", "failure", turns=[("r", "python r.py", 1, ERR)],
                               failed=[("python", ERR)], project="/home/someone/ws"), model)
    return lesson_id


def test_git_status_after_runs_shows_only_markdown(cycle: MemoryCycle, scripted) -> None:
    root = cycle.store.root
    git(root, "init", "-q")
    a_few_runs(cycle, scripted)
    untracked = git(root, "status", "--porcelain", "--untracked-files=all").splitlines()
    files = sorted(line[3:] for line in untracked)
    assert files and all(f.endswith(".md") or f == ".gitignore" for f in files), files
    assert {".index/", ".lock", ".memory-lines.json", "*.jsonl"} <= set((root / ".gitignore").read_text().split())
    assert any(f.startswith("rules/") for f in files) and "MEMORY.md" in files


def test_a_clone_without_the_raw_jsonl_reads_turns_back_from_markdown(cycle: MemoryCycle, scripted,
                                                                      tmp_path: Path, clock: Clock) -> None:
    rec = record(**DESC_RUN | {"turns": [("Largest first,\nthen check.", "sort -rn data.txt > out.txt", 0, ""),
                                         ("Check.", "cat out.txt", 0, "9\n```\n5")]})
    store = cycle.store
    with store.session():
        from tether.memory.run import RunMeta

        meta = RunMeta(run_id=rec.run_id, goal=rec.goal, outcome="success", score=1, finished=clock())
        store.save_run(rec, meta)
    text = render_trajectory(meta, rec)
    assert parse_turns(text) == rec.turns
    (store.run_dir(rec.run_id) / "trajectory.jsonl").unlink()  # as after `git clone`: the jsonl is ignored
    assert store.run_turns(rec.run_id) == rec.turns


def test_auto_commit_commits_each_run_with_its_id_and_memory_log_reads_it(tmp_path: Path, scripted,
                                                                          clock: Clock) -> None:
    cycle = MemoryCycle(tmp_path / "memory", MemoryConfig(rule_trial_rate=0.0, auto_commit=True), clock=clock)
    root = cycle.store.root
    a_few_runs(cycle, scripted)
    subjects = git(root, "log", "--format=%s").splitlines()
    assert [s.split(" ")[2] for s in subjects] == ["run-f2", "run-f1", "run-desc"]
    assert git(root, "status", "--porcelain") == ""  # everything not ignored is committed
    tracked = git(root, "ls-files").split()
    assert all(f.endswith(".md") or f == ".gitignore" for f in tracked), tracked
    log = memory_log(cycle.store, 10)
    assert log["source"] == "git" and [e["event"].split(" ")[2] for e in log["entries"]] == ["run-f2", "run-f1",
                                                                                             "run-desc"]
    assert any(i.startswith("rule-") for i in log["entries"][0]["items"])


def test_memory_log_without_git_comes_from_the_records(cycle: MemoryCycle, scripted) -> None:
    lesson_id = a_few_runs(cycle, scripted)
    log = memory_log(cycle.store, 10)
    assert log["source"] == "histories"
    events = {(e["item"], e["event"]) for e in log["entries"]}
    assert (lesson_id, "learnt from run run-desc") in events
    assert any(item.startswith("rule-") and what.startswith("learnt from runs run-f1") for item, what in events)


@pytest.mark.parametrize("kind", ["lessons", "rules"])
def test_memory_files_name_no_absolute_path(cycle: MemoryCycle, scripted, kind: str) -> None:
    a_few_runs(cycle, scripted)
    store = cycle.store
    for path in (store.root / kind).glob("*.md"):
        text = path.read_text()
        assert "/home/someone" not in text and str(store.root) not in text
    old = next((store.root / kind).glob("*.md"))
    old.write_text(old.read_text().replace("project: ''", "project: path:/home/someone/ws", 1).replace(
        "project: local:", "project: path:/home/someone/ws #", 1))
    item = (store.load_lesson if kind == "lessons" else store.load_rule)(old.stem)
    assert item.project.startswith("local:ws-")  # a former absolute identity, read in its portable form


def test_a_store_keeps_a_person_s_own_gitignore(tmp_path: Path) -> None:
    root = tmp_path / "m"
    root.mkdir()
    (root / ".gitignore").write_text("mine\n")
    MemoryStore(root, MemoryConfig())
    assert (root / ".gitignore").read_text() == "mine\n"


def test_forget_says_git_history_still_holds_it(tmp_path: Path, scripted, clock: Clock, monkeypatch) -> None:
    import os

    from typer.testing import CliRunner

    from tether.runtime.cli.app import app
    from tether.runtime.config import load_config

    for name in [n for n in os.environ if n.startswith("TETHER_")]:
        monkeypatch.delenv(name)
    home = tmp_path / "home"
    cfg = load_config(home, environ={})
    cycle = MemoryCycle(cfg.memory_dir, cfg.memory.model_copy(update={"auto_commit": True}), clock=clock)
    lesson_id = learn_desc(cycle, scripted)
    result = CliRunner().invoke(app, ["memory", "forget", "--lesson", lesson_id, "--home", str(home)])
    assert result.exit_code == 0 and "never rewrites git history" in result.stdout
    assert lesson_id in git(cfg.memory_dir, "log", "-p", "--all")  # still there: forgetting cannot reach it
