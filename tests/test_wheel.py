"""The built wheel installs one top-level module, `tether`, holding every layer (and nothing else)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("common", "gate", "graphs", "guardian", "memory", "runtime", "sandbox")


def test_the_wheel_has_one_top_level_and_every_package(tmp_path: Path) -> None:
    source = tmp_path / "src"  # a copy: building in place would leave build/ and *.egg-info in the checkout
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".venv", "build", "*.egg-info", "__pycache__",
                                                                 ".pytest_cache", ".ruff_cache", ".hypothesis"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(tmp_path), str(source)], capture_output=True, text=True, timeout=600, check=False)
    assert built.returncode == 0, built.stderr[-2000:]
    [wheel] = tmp_path.glob("tether-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names if not n.split("/", 1)[0].endswith((".dist-info", ".data"))}
    assert tops == {"tether"}
    packages = {n.rsplit("/", 1)[0] for n in names if n.endswith("/__init__.py")}
    expected = {"tether", *(f"tether/{p.relative_to(ROOT).parent}".rstrip("/.")
                            for layer in LAYERS for p in (ROOT / layer).rglob("__init__.py"))}
    assert packages == expected  # every folder with an __init__.py ships, nothing else does
    assert "tether/guardian/bashlex_tables.json" in names and "tether/sandbox/seccomp.json" in names
    assert "tether/__main__.py" in names


def test_python_m_tether_is_the_cli() -> None:
    done = subprocess.run([sys.executable, "-m", "tether", "--help"], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0 and "tether" in done.stdout and "run" in done.stdout


def test_tether_guard_is_a_library_call() -> None:
    import tether

    assert tether.guard("rm -rf /", cwd="/home/tether/workspace").decision == "deny"
    assert tether.guard("ls -la", cwd="/home/tether/workspace").decision == "allow"
