"""The lazy rule table (`guardian.rules.ready`) judges exactly as the full one.

`tether guard` and the per-call hook import only the rules modules whose rules look at every invocation;
the others are imported when a line runs one of their programs or fires one of their rules. These tests
judge every other row of bench/corpora/*.jsonl (about 1,540) twice: once with the lazy table, each line
in a child forked from a process that has just made the table ready (exactly what a fresh `tether guard`
has loaded), and once with
every module loaded first in the order the analyser imports them (the table as it was before it was lazy).
Decisions, rule ids (in order) and reasons must be equal. A lazy module must also change nothing outside
itself when it is imported (`rules_hostexec`, which adds write places to `rules_paths.PATH_RULES`, is
therefore imported at once: `rules._EAGER`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPORA = sorted((ROOT / "bench" / "corpora").glob("*.jsonl"))

_JUDGE = r"""
import json, os, sys
from pathlib import Path
mode, cache, files = sys.argv[1], sys.argv[2], sys.argv[3:]
from tether.common import rxcache
rxcache.enable(cache)
from tether.guardian import rules
from tether.guardian.decision import Where
from tether.guardian.judge import judge

rows = [json.loads(line) for f in files for line in Path(f).read_text().splitlines() if line.strip()][::2]
if mode == "full":
    rules.load()
    for prog, found in rules._BY_PROGRAM.items():  # the order rules were registered in is the order rules_for gives
        assert rules.rules_for(prog) == found + rules._ANY, prog
    assert not rules._LAZY
else:
    rules.ready()
    assert rules._LAZY, "the index was not used"
    lazy = [n for n in rules._MODULES if f"tether.guardian.{n}" not in sys.modules]
    assert {"rules_cloud", "rules_toolconfig", "rules_guard_off"} <= set(lazy), lazy


def verdict(row):
    where = Where(workspace=Path(row.get("workspace") or "/home/tether/project"))
    r = judge(row["command"], where)
    return [row["command"], r.decision, r.rules, r.reason]


skipped = 0
for row in rows:
    if mode == "full":
        print(json.dumps(verdict(row)))
        continue
    # each line in a forked child: exactly the state a new `tether guard` process has after rules.ready()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        out = verdict(row) + [sum(f"tether.guardian.{n}" not in sys.modules for n in lazy)]
        os.write(write, json.dumps(out).encode())
        os._exit(0)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 1 << 16):
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    got = json.loads(b"".join(chunks))
    skipped += got.pop()
    print(json.dumps(got))
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
    assert len(lazy) == len(full) > 1500  # every other row of every corpus
    assert lazy[-1][0] == "#skipped" and int(lazy[-1][1]) > 2 * len(lazy), "lines did not stay lazy"  # type: ignore[arg-type]
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


_SIDE_EFFECTS = r"""
import json, sys
from tether.common import rxcache
rxcache.enable(sys.argv[1])
from tether.guardian import rules
from tether.guardian.judge import judge  # noqa: F401
rules.ready()

def shape():
    # every list, dict and set at the top of every loaded guardian module but the rule table's own (by identity
    # and size): what importing a lazy module could change behind the table's back
    out = {}
    table = {id(v) for v in vars(rules).values()}  # the registry itself, also where others import it from
    for name, mod in list(sys.modules.items()):
        if not name.startswith("tether.") or name in ("tether.guardian.rules", "tether.common.rxcache"):
            continue  # the table changes by design; the pattern cache only gains compiled forms
        for key, value in list(vars(mod).items()):
            if isinstance(value, (list, dict, set)) and id(value) not in table:
                out[f"{name}.{key}"] = (id(value), len(value))
    return out

changed = {}
for n in [n for n in rules._MODULES if f"tether.guardian.{n}" not in sys.modules]:
    before = shape()
    __import__(f"tether.guardian.{n}")
    after = shape()
    changed[n] = sorted(k for k, v in before.items() if after.get(k) != v)
print(json.dumps(changed))
"""


def test_a_lazy_rules_module_changes_nothing_outside_itself_when_imported(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    subprocess.run([sys.executable, "-c", "import sys; from tether.common import rxcache; rxcache.enable(sys.argv[1]);"
                    "from tether.guardian import rules; rules.ready()", str(cache)], check=True, cwd=ROOT)
    out = subprocess.run([sys.executable, "-c", _SIDE_EFFECTS, str(cache)], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    changed = json.loads(out.stdout)
    assert changed and "rules_hostexec" not in changed  # imported at once (rules._EAGER)
    assert {n: c for n, c in changed.items() if c} == {}
