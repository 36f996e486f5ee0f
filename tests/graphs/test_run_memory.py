"""The memory cycle around real runs (issue 5): write, recall, rely on, revise, forget."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "verified-success.yaml"

pytestmark = pytest.mark.docker


def _fresh_workspace(tether, name: str) -> None:
    tether.workspace = tether.workspace.parent / name
    tether.workspace.mkdir()


def test_running_the_example_twice_shows_the_whole_cycle(tether):
    code, first, err = tether.run(EXAMPLE)
    assert code == 0, err
    assert first["lessons_used"] == [] and len(first["lessons_written"]) == 1
    lesson_id = first["lessons_written"][0]
    memory = tether.home / "memory"
    lesson = (memory / "lessons" / f"{lesson_id}.md").read_text()
    assert f"source_run: {first['run_id']}" in lesson and "source_outcome: success" in lesson
    assert (memory / "runs" / first["run_id"] / "compilation.md").is_file()
    assert lesson_id in (memory / "MEMORY.md").read_text()

    _fresh_workspace(tether, "ws2")
    code, second, err = tether.run(EXAMPLE)
    assert code == 0, err
    assert second["lessons_used"] == [lesson_id]
    assert second["lessons_revised"] == [{"id": lesson_id, "verdict": "confirmed", "status": "ok", "detail": ""}]
    assert second["lessons_written"] == []  # the same insight again is a near-duplicate, not a new lesson
    revised = (memory / "lessons" / f"{lesson_id}.md").read_text()
    assert f"run `{second['run_id']}` · confirmed · accepted" in revised
    assert "revision_count: 1" in revised

    code, out, err = tether.cli("memory", "forget", "--run", first["run_id"])
    assert code == 0, err
    cites = subprocess.run(["grep", "-rl", first["run_id"], str(memory)], capture_output=True, text=True)
    assert cites.stdout == ""
    code, listing, _ = tether.cli("memory", "list")
    assert listing["lessons"] == []


def test_no_memory_runs_read_and_write_nothing(tether):
    code, out, err = tether.run(EXAMPLE, "--no-memory")
    assert code == 0, err
    assert "lessons_written" not in out
    assert not (tether.home / "memory" / "lessons").exists()
