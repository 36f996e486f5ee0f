"""The lazy rule table (`guardian.rules.ready`) judges exactly as the full one.

`tether guard` and the per-call hook import only the rules modules whose rules look at every invocation;
the others are imported when a line runs one of their programs or fires one of their rules. These tests
judge every row of bench/corpora/*.jsonl twice, each in a new process: once with the lazy table, the
rules modules a line did not need unloaded again before the next line (so each line starts from what a
fresh `tether guard` loads), and once with every module loaded first in the order the analyser imports
them (the table as it was before it was lazy). Decisions, rule ids (in order) and reasons must be equal.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPORA = sorted((ROOT / "bench" / "corpora").glob("*.jsonl"))

_JUDGE = r"""
import json, sys
from pathlib import Path
mode, cache, files = sys.argv[1], sys.argv[2], sys.argv[3:]
from tether.common import rxcache
rxcache.enable(cache)
from tether.guardian import rules
from tether.guardian.decision import Where
from tether.guardian.judge import judge
import tether.guardian as package

rows = [json.loads(line) for f in files for line in Path(f).read_text().splitlines() if line.strip()]
if mode == "full":
    rules.load()
    for prog, found in rules._BY_PROGRAM.items():  # the order rules were registered in is the order rules_for gives
        assert rules.rules_for(prog) == found + rules._ANY, prog
    assert not rules._LAZY
else:
    rules.ready()
    assert rules._LAZY, "the index was not used"
    base = {n for n in rules._MODULES if f"tether.guardian.{n}" in sys.modules}
    lazy = [n for n in rules._MODULES if n not in base]
    assert {"rules_cloud", "rules_git", "rules_hostexec", "rules_toolconfig"} <= set(lazy), lazy
    names = {rank: name for name, rank in rules._RANK.items()}

def unload():
    # forget the rules modules a fresh process does not import (their rules leave the table with them)
    gone = [n for n in lazy if f"tether.guardian.{n}" in sys.modules]
    for n in gone:
        del sys.modules[f"tether.guardian.{n}"]
        if hasattr(package, n):
            delattr(package, n)
    ids = {rid for rid, (rank, _) in rules._ORIGIN.items() if names.get(rank) in gone}
    for rid in ids:
        del rules.RULES[rid], rules._ORIGIN[rid]
    for prog in list(rules._BY_PROGRAM):
        rules._BY_PROGRAM[prog] = [r for r in rules._BY_PROGRAM[prog] if r.id not in ids]
        if not rules._BY_PROGRAM[prog]:
            del rules._BY_PROGRAM[prog]
    rules._ANY[:] = [r for r in rules._ANY if r.id not in ids]
    rules._SORTED.clear()
    return len(gone)

skipped = 0
for row in rows:
    if mode == "lazy":
        unload()
    where = Where(workspace=Path(row.get("workspace") or "/home/tether/project"))
    r = judge(row["command"], where)
    if mode == "lazy":
        skipped += sum(f"tether.guardian.{n}" not in sys.modules for n in lazy)
    print(json.dumps([row["command"], r.decision, r.rules, r.reason]))
print(json.dumps(["#skipped", skipped]))
"""


def _judge_all(mode: str, cache: Path) -> list[list[object]]:
    out = subprocess.run([sys.executable, "-c", _JUDGE, mode, str(cache), *map(str, CORPORA)], capture_output=True,
                         text=True, cwd=ROOT, check=False, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    return [json.loads(line) for line in out.stdout.splitlines()]


def test_lazy_rule_table_gives_the_full_tables_verdicts_on_every_corpus_row(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    subprocess.run([sys.executable, "-c", "import sys; from tether.common import rxcache; rxcache.enable(sys.argv[1]);"
                    "from tether.guardian import rules; rules.ready()", str(cache)], check=True, cwd=ROOT)
    assert (cache / "rules-index.marshal").is_file()  # the first process builds the index (a full load)
    lazy, full = _judge_all("lazy", cache), _judge_all("full", cache)
    assert len(lazy) == len(full) > 3000
    assert lazy[-1][0] == "#skipped" and int(lazy[-1][1]) > 5 * len(lazy), "lines did not start lazy"  # type: ignore[arg-type]
    differ = [(a, b) for a, b in zip(lazy[:-1], full[:-1], strict=True) if a != b]
    assert differ == [], differ[:5]


def test_a_changed_rules_module_or_a_damaged_index_means_a_full_load(tmp_path: Path) -> None:
    code = ("import sys; from tether.common import rxcache; rxcache.enable(sys.argv[1]);"
            "from tether.guardian import rules; rules.ready(); print(bool(rules._LAZY), len(rules.RULES))")

    def run() -> list[str]:
        return subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                              check=True, cwd=ROOT).stdout.split()

    first = run()
    assert first[0] == "False"  # no index yet: everything loaded, the index written
    assert run()[0] == "True"
    index = tmp_path / "rules-index.marshal"
    index.write_bytes(b"\x00garbage")
    assert run() == first  # unreadable: a full load, and a new index
    assert run()[0] == "True"
    import marshal

    data = marshal.loads(index.read_bytes())
    data["key"] = [("rules", 0, 0)]  # as if a rules module had changed since the index was built
    index.write_bytes(marshal.dumps(data))
    assert run() == first


def test_without_a_start_up_cache_the_table_is_full() -> None:
    code = ("from tether.guardian import rules; rules.ready(); import sys;"
            "print(bool(rules._LAZY), all(f'tether.guardian.{n}' in sys.modules for n in rules._MODULES))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.split() == ["False", "True"]
