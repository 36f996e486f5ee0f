"""A full disk and a read-only home end in one line, never a traceback or a SIGBUS (issue 12).

The home sits on a real 5 MB tmpfs (mounted here; the tests need root, as
CI runs). Memory commands run in child processes, since a SIGBUS in the
index engine would kill the test process itself.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "verified-success.yaml"
sys.path.insert(0, str(ROOT / "tests" / "memory"))


@pytest.fixture
def small_home(tmp_path: Path) -> Iterator[Path]:
    """A 5 MB tmpfs mounted at tmp_path/home, unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (CI runs as root)")
    home = tmp_path / "home"
    home.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=5m", "tmpfs", str(home)], check=True)
    try:
        yield home
    finally:
        subprocess.run(["umount", "-l", str(home)], check=False)


def _memory_with_lessons(tmp_path: Path, dest: Path) -> None:
    """A memory folder with real lessons (made on a roomy disk), copied without its index."""
    from memory_helpers import learn_desc

    from tether.memory.config import MemoryConfig
    from tether.memory.cycle import MemoryCycle
    from tether.runtime.models.scripted import Script, ScriptedChatModel

    def scripted(**responses: list[object]) -> ScriptedChatModel:
        norm = {
            site: [json.dumps(a) if isinstance(a, dict) else a for a in answers] for site, answers in responses.items()
        }
        return ScriptedChatModel(script=Script.model_validate({"responses": norm}))

    source = tmp_path / "roomy"
    learn_desc(MemoryCycle(source, MemoryConfig()), scripted)
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns(".index", ".lock"))


def tether(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")} | {"TETHER_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "tether", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300
    )


def one_line(p: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stderr)  # not 135 / -7: no SIGBUS
    assert "Traceback" not in p.stderr, p.stderr
    errors = [line for line in p.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, p.stderr
    for needle in needles:
        assert needle in errors[0], errors[0]


def _fill(home: Path) -> None:
    with (home / "filler").open("wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass


def test_memory_commands_on_a_small_or_full_home_fail_in_one_line_without_sigbus(
    tmp_path: Path, small_home: Path
) -> None:
    _memory_with_lessons(tmp_path, small_home / "memory")
    for args in (("memory", "rebuild"), ("memory", "list"), ("memory", "search", "sort numbers")):
        one_line(tether(*args, home=small_home), "memory index")
    assert not (small_home / "memory" / ".index" / "edge").exists()  # no half-made index left to fill the disk
    _fill(small_home)
    for args in (("memory", "rebuild"), ("memory", "list")):
        p = tether(*args, home=small_home)
        one_line(p)
        assert "space" in p.stderr.lower()
    (small_home / "filler").unlink()
    one_line(tether("memory", "rebuild", home=small_home), "memory index")  # freed: still one line, still no SIGBUS


def test_a_run_on_a_full_home_is_one_line_and_its_folder_is_recognised(tmp_path: Path, small_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    _fill(small_home)
    one_line(
        tether("run", "g", "--model", f"scripted:{EXAMPLE}", "-w", str(ws), "--no-memory", home=small_home), "space"
    )
    for folder in (small_home / "runs").glob("*"):
        one_line(tether("resume", folder.name, home=small_home))


def test_a_read_only_home_is_one_line(tmp_path: Path, small_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (small_home / "runs").mkdir()
    subprocess.run(["mount", "-o", "remount,ro", str(small_home)], check=True)
    for args in (
        ("memory", "list"),
        ("run", "g", "--model", f"scripted:{EXAMPLE}", "-w", str(ws)),
        ("resume", "20260101-120000-abcdef"),
    ):
        one_line(tether(*args, home=small_home), "not writable")
