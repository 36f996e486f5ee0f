"""ruff holds the tree to its rules, line length (120) included."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_finds_nothing() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    assert ruff, "ruff is a dev dependency: pip install -e '.[dev]'"
    done = subprocess.run([ruff, "check", "--no-cache", str(ROOT)], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stdout[-4000:]
