"""The chaos suite's short form (issue 12): random signals to real commands, then every invariant.

`bench/chaos.py` is the long form (more rounds, figures printed); this runs
a few rounds with a fixed seed in CI and fails on any broken invariant.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytestmark = [pytest.mark.chaos, pytest.mark.docker]
BENCH = Path(__file__).resolve().parents[2] / "bench" / "chaos.py"


def test_random_signals_break_no_invariant(tiny_image: str, tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("chaos_bench", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    figures, bad, _ = bench.run_chaos(rounds=3, seed=7, image=tiny_image, base=tmp_path)
    assert sum(n for k, n in figures.items() if k.startswith("signalled")) >= 1, figures
    assert {k: n for k, n in bad.items() if n} == {}, (bad, figures)
