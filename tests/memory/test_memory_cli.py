"""`tether memory list|show|search|rebuild|forget`, with --json, on a real memory folder."""

from __future__ import annotations

import json
import os

import pytest
from memory_helpers import Clock, learn_desc, record
from typer.testing import CliRunner

from tether.memory.cycle import MemoryCycle
from tether.runtime.cli.app import app
from tether.runtime.config import load_config


@pytest.fixture
def home(tmp_path, monkeypatch, scripted):
    for name in [n for n in os.environ if n.startswith("TETHER_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    home = tmp_path / "home"
    cfg = load_config(home, environ={})
    lesson_id = learn_desc(MemoryCycle(cfg.memory_dir, cfg.memory, clock=Clock()), scripted)
    return home, lesson_id


def tether(home, *args):
    result = CliRunner().invoke(app, ["memory", *args, "--home", str(home)])
    return result.exit_code, result.stdout, result.stderr


def test_list_show_search_rebuild_forget_as_json(home) -> None:
    home, lesson_id = home
    code, out, _ = tether(home, "list", "--json")
    assert code == 0
    data = json.loads(out)
    [lesson] = data["lessons"]
    assert {"id", "title", "text", "source_run", "source_outcome", "status", "revisions"} <= set(lesson)
    assert (lesson["id"], lesson["source_run"], lesson["status"], lesson["listed"]) == (
        lesson_id,
        "run-desc",
        "live",
        True,
    )
    assert [r["run_id"] for r in data["runs"]] == ["run-desc"]

    code, out, _ = tether(home, "show", lesson_id, "--json")
    assert code == 0 and json.loads(out)["text"] == "Put the largest numbers first when sorting numbers."

    code, out, _ = tether(home, "search", "sort numbers ascending", "--json")
    assert code == 0 and [h["id"] for h in json.loads(out)["hits"]] == [lesson_id]
    code, out, _ = tether(home, "search", "sort numbers", "--kind", "run", "--json")
    assert [h["run_id"] for h in json.loads(out)["hits"]] == ["run-desc"]

    code, out, _ = tether(home, "rebuild", "--json")
    assert code == 0 and json.loads(out)["indexed"] == 2

    code, out, _ = tether(home, "forget", "--run", "run-desc", "--json")
    assert code == 0 and json.loads(out)["lessons_deleted"] == [lesson_id]
    code, out, _ = tether(home, "list", "--json")
    assert json.loads(out)["lessons"] == [] and json.loads(out)["runs"] == []


def test_unknown_ids_give_one_line_errors(home) -> None:
    home, _ = home
    code, out, err = tether(home, "show", "L-nope", "--json")
    assert code == 2 and out == "" and "no lesson, rule or run 'L-nope'" in err and len(err.strip().splitlines()) == 1
    code, _, err = tether(home, "forget", "--run", "ghost")
    assert code == 2 and "no run 'ghost'" in err


def test_human_output(home) -> None:
    home, lesson_id = home
    code, out, _ = tether(home, "list")
    assert code == 0 and lesson_id in out
    code, out, _ = tether(home, "show", lesson_id)
    assert code == 0 and "Revision history" in out and "Insight:" in out


def test_show_displays_the_history_and_forget_takes_one_lesson(home, scripted) -> None:
    home, lesson_id = home
    cfg = load_config(home, environ={})
    cycle = MemoryCycle(cfg.memory_dir, cfg.memory, clock=Clock())
    goal = "Sort the numbers in values.txt in ascending order"
    run = record("run-asc", goal, "failure", turns=[(f"Per {lesson_id}.", "sort -rn values.txt", 0, "")])
    new = "Put the largest numbers first only when the task asks for descending order."
    model = scripted(compile=["c"], lessons=[{"lessons": []}],
                     revise=[{"verdict": "outdated", "evidence": ["sort -rn data.txt > out.txt"], "lesson": new}])
    cycle.after_run(run, model, cycle.read(goal))
    code, out, _ = tether(home, "show", lesson_id)
    assert code == 0 and "outdated" in out and "superseded" in out
    code, out, _ = tether(home, "show", lesson_id, "--json")
    last = json.loads(out)["revisions"][-1]
    assert (last["before"], last["after"]) == ("Put the largest numbers first when sorting numbers.", new)
    code, _, err = tether(home, "forget", "--lesson", lesson_id, "--rule", "rule-x")
    assert code == 2 and "exactly one of" in err
    code, out, _ = tether(home, "forget", "--lesson", lesson_id, "--json")
    assert code == 0 and json.loads(out) == {"kind": "lesson", "id": lesson_id, "source_run": "run-desc"}
    code, out, _ = tether(home, "list", "--json")
    assert json.loads(out)["lessons"] == []
    code, _, err = tether(home, "forget", "--rule", "rule-nope")
    assert code == 2 and "no rule 'rule-nope'" in err


def test_a_person_reviews_proposals_for_a_pinned_lesson(home, scripted) -> None:
    home, lesson_id = home
    cfg = load_config(home, environ={})
    manifest = cfg.memory_dir / "MEMORY.md"
    text = manifest.read_text()
    manifest.write_text(text.replace("when sorting numbers.", "when the task says descending [really].")
                        .replace("## Rules", "- Check the [input] encoding before sorting numbers.\n\n## Rules"))
    code, out, err = tether(home, "list", "--json")
    assert code == 0, err
    lessons = {x["id"]: x for x in json.loads(out)["lessons"]}
    [person] = [x for x in lessons.values() if x["author"] == "person"]
    assert person["text"] == "Check the [input] encoding before sorting numbers." and person["pinned"]
    assert lessons[lesson_id]["pinned"]  # edited in MEMORY.md
    code, out, _ = tether(home, "proposals")
    assert code == 0 and "no pending proposals" in out

    cycle = MemoryCycle(cfg.memory_dir, cfg.memory, clock=Clock())
    goal = "Sort the numbers in values.txt in ascending order"
    for run_id, answer in (("run-a", {"verdict": "outdated", "evidence": ["sort -rn data.txt > out.txt"],
                                      "lesson": ""}),
                           ("run-b", {"verdict": "confirmed", "evidence": [], "lesson": ""})):
        rec = record(run_id, goal, "failure", turns=[(f"Per {lesson_id}.", "sort -rn v.txt", 0, "")])
        cycle.after_run(rec, scripted(compile=["c"], revise=[answer], lessons=[{"lessons": []}]), cycle.read(goal))
    code, out, _ = tether(home, "proposals", "--json")
    assert [(p["run_id"], p["action"]) for p in json.loads(out)["proposals"]] == [
        ("run-a", "retire the lesson"), ("run-b", "keep the text (one more confirmation)")]
    code, out, _ = tether(home, "proposals")
    assert code == 0 and "retire" in out and "accept LESSON [--run RUN]" in out
    code, out, _ = tether(home, "show", lesson_id)
    assert code == 0 and "pinned" in out and "[really]" in out and "proposes to retire" in out
    code, out, _ = tether(home, "reject", lesson_id, "--run", "run-a")
    assert code == 0 and "rejected outdated from run run-a" in out and "1 more pending" in out
    code, out, _ = tether(home, "accept", lesson_id)
    assert code == 0 and "accepted confirmed from run run-b" in out
    code, _, err = tether(home, "accept", lesson_id)
    assert code != 0 and "no pending proposal" in err
    data = json.loads(tether(home, "show", lesson_id, "--json")[1])
    assert (data["status"], data["confirmations"], data["pending"]) == ("live", 1, 0)
    assert "[really]" in data["insight"]

    code, out, _ = tether(home, "log", "--json")
    log = json.loads(out)
    assert code == 0 and log["source"] == "histories"
    assert any(e["item"] == person["id"] and e["event"] == "written by a person" for e in log["entries"])
    code, out, _ = tether(home, "log")
    assert code == 0 and "not a git repository" in out
