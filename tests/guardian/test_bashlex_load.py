"""The shipped bashlex parser tables are exactly what bashlex's PLY would build."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tether.guardian import bashlex_load

ROOT = Path(__file__).resolve().parents[2]


def test_shipped_tables_match_a_fresh_build() -> None:
    shipped = (ROOT / "guardian" / "bashlex_tables.json").read_text()
    assert shipped == bashlex_load.tables_json(), "run: python -m tether.guardian.bashlex_load"


def test_fast_import_uses_the_shipped_tables_and_parses() -> None:
    code = ("from guardian.bashlex_load import bashlex; import sys; lazy = 'bashlex.parser' not in sys.modules;"
            "kind = bashlex.parse('a && b | c')[0].kind; import bashlex.parser as p;"
            "print(type(p.yaccparser.productions[1]).__name__, kind, lazy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         check=True)
    assert out.stdout.split() == ["_Production", "list", "True"]  # imported on first use, from the tables


def test_errors_alone_do_not_import_the_parser_and_stay_the_class_bashlex_raises() -> None:
    code = ("from guardian.bashlex_load import bashlex; import sys; E = bashlex.errors.ParsingError;"
            "alone = 'bashlex.parser' not in sys.modules\n"
            "try: bashlex.parse('a &&')\n"
            "except E: print(alone, 'caught')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.split() == ["True", "caught"]


def test_mismatched_tables_fall_back_to_the_slow_build(tmp_path: Path) -> None:
    bad = tmp_path / "bashlex_tables.json"
    bad.write_text('{"signature": "other", "action": {}, "goto": {}, "productions": []}')
    code = ("import guardian.bashlex_load as m, pathlib, sys;"
            f"m._TABLES = pathlib.Path({str(bad)!r});"
            "[sys.modules.pop(n) for n in list(sys.modules) if n.startswith('bashlex')];"
            "b = m._load(); import bashlex.parser as p;"
            "print(type(p.yaccparser.productions[1]).__name__, b.parse('ls; rm x')[0].kind)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         check=True)
    assert out.stdout.split() == ["Production", "list"]
