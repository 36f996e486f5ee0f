"""Crash-safe writes, markdown round trips, the run record, the dense extra's guard."""

from __future__ import annotations

import importlib.util
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from memory_helpers import T0, record

from tether.common.atomic import write_atomic
from tether.common.errors import StateFileError
from tether.memory.config import MemoryConfig
from tether.memory.dense import PACKAGE, load_embedder
from tether.memory.errors import DenseUnavailableError
from tether.memory.index import make_index
from tether.memory.lesson import Lesson, Revision, lesson_from_markdown, lesson_to_markdown
from tether.memory.run import program_of


def test_a_writer_killed_mid_write_leaves_a_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "big.md"
    size = 2_000_000
    code = (
        "import sys\nfrom pathlib import Path\nfrom common.atomic import write_atomic\n"
        f"p = Path({str(target)!r})\nn = 0\n"
        f"while True:\n    write_atomic(p, 'AB'[n % 2] * {size})\n    n += 1\n    print(n, flush=True)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    for _ in range(3):  # let it finish a few writes, then kill it in the middle of the next ones
        child.stdout.readline()
    time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()
    text = target.read_text()
    assert len(text) == size and text in ("A" * size, "B" * size)


def test_failed_replace_cleans_its_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    (target / "child").mkdir(parents=True)  # os.replace of a file onto a non-empty folder fails
    with pytest.raises(StateFileError, match="cannot write"):
        write_atomic(target, "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_lesson_markdown_round_trips_with_history() -> None:
    lesson = Lesson(id="L-1", title="t", source_run="r1", source_outcome="failure", source_goal="goal\nsecond line",
                    created=T0, insight="Do x.", applicability="when y",
                    history=[Revision(at=T0, run_id="r2", verdict="outdated", status="rejected",
                                      evidence=['quote with "marks" · and dots'], reason="why\nnot", proposed="p")])
    assert lesson_from_markdown(lesson_to_markdown(lesson)) == lesson


def test_run_record_score_and_program() -> None:
    assert record("r1", "g").score == 1 and record("r2", "g", "failure").score == -1
    assert program_of("sudo FOO=1 /usr/bin/pip install x") == "pip"
    with pytest.raises(ValueError, match="run_id"):
        record("../escape", "g")


def test_dense_without_the_extra_says_how_to_install(tmp_path: Path) -> None:
    if importlib.util.find_spec(PACKAGE) is not None:
        pytest.skip("the dense extra is installed here")
    with pytest.raises(DenseUnavailableError, match=r"tether\[dense\]"):
        load_embedder()
    with pytest.raises(ImportError):
        make_index(tmp_path, MemoryConfig(dense=True))
