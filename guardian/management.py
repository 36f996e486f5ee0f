"""Destructive verbs of management CLIs (containers, clusters, PaaS, ORMs, stores, clouds), by scope.

Parts:
    judge: Inv (+ whether its targets are every object) -> Finding or None:
        the verb the invocation runs, the decision its scope gives (deny for
        every object, all namespaces, a whole project or bucket, a production
        target, no backup; ask for one named resource; allow for reads,
        dry-runs and `--help`), and the category.
    on_invocation: the analyser hook: fires MGMT-001..004 and remembers the
        listers (`docker ps -aq`, `redis-cli --scan`) whose output a later
        `$(..)` or `| xargs` feeds to a destructive verb.
    inert: a management invocation that changes nothing (help, dry-run, a plan).
    coverage / coverage_markdown: tools and verbs per family (docs and tests).

The data lives in `guardian.management_table`; this is the only module that reads it.
"""

from __future__ import annotations

import re
from collections import Counter

from tether.common.record import dataclass
from tether.guardian.lazy_re import Lazy
from tether.guardian.management_table import MANAGEMENT, PROD, PROD_ENV, RUNNERS, SAFE, SAFE_PREFIXES, TEST_VALUE
from tether.guardian.rules import Inv
from tether.guardian.words import UNKNOWN

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from tether.guardian.analyse import Analyser

_INDEX: dict[str, tuple[str, dict]] = {}
for _name, _e in MANAGEMENT.items():
    for _n in [_name, *_e.get("aka", "").split()]:
        _INDEX.setdefault(_n, (_name, _e))
_VERBS: dict[str, dict[tuple[str, ...], dict]] = {
    name: {tuple(k.lower().split()): v for k, v in e["verbs"].items()} for name, e in MANAGEMENT.items()}
_PROD = Lazy(PROD, re.I)
_RANK = {"allow": 0, "ask": 1, "deny": 2}
_HTTP = frozenset({"curl", "wget", "http", "https", "xh", "curlie"})
_ES_WIDE = Lazy(r"://[^/\s]+/(?:_all|\*|[^/\s?]*\*[^/\s?]*)(?:[/?]|$)")
_MATCH_ALL = Lazy(r"match_all|<delete>\s*<query>\s*\*:\*|\"delete\"\s*:\s*\{\s*\"query\"\s*:\s*\"\*:\*\"")
_SQL_CLIS = frozenset({"psql", "mysql", "mariadb", "mongo", "mongosh", "sqlcmd", "clickhouse-client",
                       "cockroach", "cqlsh", "snowsql", "sqlplus"})
TOOLS: frozenset[str] = frozenset(_INDEX) | frozenset(RUNNERS) | _HTTP | _SQL_CLIS
"""Every program name this module looks at."""


@dataclass(frozen=True, slots=True)
class Finding:
    """What one invocation of a management CLI destroys, and how strictly that is judged."""

    decision: str
    category: str
    """`infra` (cloud-destructive) or `data` (database-destructive)."""
    detail: str


def _opt_present(args: list[str], names: str) -> bool:
    """Whether any option of `names` (`--x`, `--x=..`, `-x`, `-x` in a cluster `-xf`) is in args."""
    for name in names.split():
        for a in args:
            if a == "--":
                break
            if a == name or (name.startswith("--") and a.startswith(name + "=")):
                return True
            if (len(name) == 2 and name[0] == "-" and a.startswith("-") and not a.startswith("--")
                    and name[1] in a[1:]):
                return True
            if name.startswith("-") and not name.startswith("--") and len(name) > 2 and a.startswith(name + "="):
                return True
    return False


def _split(args: list[str], gvalued: set[str]) -> tuple[list[str], list[str]]:
    """(positionals, values of global valued options) of a tool's arguments."""
    pos: list[str] = []
    values: list[str] = []
    skip = False
    for a in args:
        if skip:
            values.append(a)
            skip = False
        elif a == "--":
            continue
        elif a.startswith("-") and a != "-":
            if a in gvalued:
                skip = True
            elif "=" in a:
                values.append(a.split("=", 1)[1])
        else:
            pos.append(a)
    return pos, values


def _tool(inv: Inv) -> tuple[str, dict, list[str]] | None:
    """(tool name, entry, its arguments) for an invocation, through runners (`php artisan`)."""
    prog = inv.prog
    if prog in _INDEX:
        name, e = _INDEX[prog]
        return name, e, inv.args
    runs = RUNNERS.get(prog)
    if runs:
        for i, a in enumerate(inv.args):
            if a.startswith("-"):
                continue
            base = a.rsplit("/", 1)[-1]
            if base in runs and base in _INDEX:
                name, e = _INDEX[base]
                return name, e, inv.args[i + 1 :]
            return None
    return None


def _verb(tool: str, pos: list[str]) -> tuple[tuple[str, ...], dict] | None:
    verbs = _VERBS[tool]
    low = tuple(p.lower() for p in pos[:3])
    for k in (3, 2, 1):
        entry = verbs.get(low[:k])
        if entry is not None and len(low) >= k:
            return low[:k], entry
    return None


def inert(inv: Inv) -> bool:
    """Help, a dry-run or a plan: the invocation changes nothing."""
    found = _tool(inv)
    if found is None:
        return False
    name, e, args = found
    gvalued = set(e.get("gvalued", "").split())
    safe = SAFE - gvalued
    if any(a in safe or a.startswith(SAFE_PREFIXES) for a in args):
        return True
    pos, _ = _split(args, gvalued)
    return bool(pos) and pos[0] in ("plan", "preview", "help", "show", "list", "ls", "get", "describe",
                                    "status", "validate", "output")


def is_lister(inv: Inv) -> str:
    """The tool name when `inv` prints every object id of that tool (unfiltered), else ''."""
    found = _tool(inv)
    if found is None:
        return ""
    name, e, args = found
    lists = e.get("lists", "").split()
    if not lists:
        return ""
    gvalued = set(e.get("gvalued", "").split()) - set(e.get("filters", "").split())
    pos, _ = _split(args, gvalued)
    key = ".".join(p.lower() for p in pos[:2])
    verb = next((v for v in lists if v.startswith("--") and v in args), "") or next(
        (v for v in lists if key == v or key.startswith(v + ".") or key.split(".")[0] == v), "")
    if not verb:
        return ""
    if _opt_present(args, e.get("filters", "")):
        for i, a in enumerate(args):  # `--pattern '*'` still lists everything
            if a in e.get("filters", "").split() and i + 1 < len(args) and args[i + 1] != "*":
                return ""
            if "=" in a and a.split("=", 1)[0] in e.get("filters", "").split() and a.split("=", 1)[1] != "*":
                return ""
    if verb in ("keys", "scan"):
        n = len(verb.split("."))
        rest = [p for p in pos[n:] if not p.isdigit()]
        if rest and rest[0] != "*":
            return ""
    return name


def judge(inv: Inv, every: bool = False, stdin: str | None = None, here: bool = True) -> Finding | None:
    """The finding for one invocation; `every`: its unknown targets are a lister's whole output;
    `stdin`: the text it reads, when known (`echo FLUSHALL | redis-cli`); `here`: not run on another
    machine or container (`ssh host ..`, `kubectl exec ..`), so `localhost` is this one."""
    if inv.prog in _HTTP:
        return _http(inv)
    if inv.prog in _SQL_CLIS:
        return _sql(inv, stdin)
    found = _tool(inv)
    if found is None:
        return None
    name, e, args = found
    gvalued = set(e.get("gvalued", "").split())
    pos, values = _split(args, gvalued)
    if pos and pos[0] in e.get("subvalued", {}):
        gvalued |= set(e["subvalued"][pos[0]].split())
        pos, values = _split(args, gvalued)
    hit = _verb(name, pos)
    if hit is None and e.get("denytext") and _denytext(inv, e["denytext"], stdin):
        return Finding("deny", "data", f"{name}: wipes every key")
    if hit is None and e.get("generic"):
        hit = _generic(pos)
    if hit is None:
        return None
    words, v = hit
    verb = " ".join(words)
    cat = v.get("cat") or ("data" if e["fam"] in ("orm", "store") else "infra")
    if inert(inv):
        return Finding("allow", cat, f"{name} {verb}: help or dry-run")
    decision = v["do"]
    why = ""
    targets = pos[len(words):]
    if v.get("need") and not _opt_present(args, v["need"]):
        return Finding("allow", cat, f"{name} {verb} without {v['need'].split()[0]}")
    if v.get("narrow") and _opt_present(args, v["narrow"]):
        decision, why = "ask", v["narrow"].split()[0]
    if v.get("ask") and _opt_present(args, v["ask"]):
        decision, why = _max(decision, "ask"), v["ask"].split()[0]
    if v.get("text") and any(re.search(v["text"], t) for t in [*args, *([stdin] if stdin else [])]):
        decision, why = _max(decision, "ask"), "code that wipes tables"
    if v.get("zero") and "zero" in targets:
        decision, why = _max(decision, "ask"), "every migration undone"
    if v.get("deny") and _opt_present(args, v["deny"]):
        decision, why = "deny", next(o for o in v["deny"].split() if _opt_present(args, o))
    if v.get("root") and (any(re.match(v["root"], t) for t in targets) or v.get("rootbare") and not targets) and (
            not v.get("rootneed") or _opt_present(args, v["rootneed"])) and not _opt_present(args, "--include"):
        decision, why = "deny", "the whole bucket or database"
    if any(UNKNOWN in t for t in targets) and every:
        decision, why = _max(decision, v.get("mass", "deny")), "every object the lister prints"
    elif here and v.get("local") and _local_one(inv, targets, v) and not _production(inv, [*args, *values]):
        decision, why = v["local"], "on this machine"
    if decision == "allow":
        return Finding("allow", cat, f"{name} {verb}")
    if e.get("critical") and any(re.match(e["critical"], t) for t in targets):
        decision, why = "deny", "a namespace the cluster itself runs in"
    if e.get("wide") and _opt_present(args, e["wide"]):
        decision, why = "deny", "every object (" + next(o for o in e["wide"].split() if _opt_present(args, o)) + ")"
    if e.get("denyenv") and any(k in inv.simple.env for k in e["denyenv"].split()):
        decision, why = "deny", e["denyenv"].split()[0]
    prod = _production(inv, [*args, *values])
    if prod:
        decision, why = "deny", f"production target {prod}"
    elif decision == "ask" and e.get("testenv") and _test_database(inv, args, e["testenv"].split()):
        return Finding("allow", cat, f"{name} {verb} on the test database")
    elif decision == "ask" and v.get("onepod") and one_pod(inv):
        return Finding("allow", cat, f"{name} {verb}: one named pod, which its controller recreates")
    detail = f"{name} {verb}" + (f": {why}" if why else "")
    return Finding(decision, cat, detail)


def _local_one(inv: Inv, targets: list[str], v: dict) -> bool:
    """The verb acts on a server on this machine (`local_databases.server`), on at most `localmax` named
    objects (none: no limit), none of them unknown until run time or a pattern."""
    from tether.guardian import local_databases

    most = v.get("localmax")
    if most is not None and len(targets) > most:
        return False
    if any(UNKNOWN in t or any(c in t for c in "*?[") for t in targets):
        return False
    return local_databases.server(inv)[0]


_POD_KINDS = frozenset({"pod", "pods", "po"})
_POD_OFF = "-f --filename -k --kustomize -l --selector --field-selector --all -A --all-namespaces --raw"


def one_pod(inv: Inv) -> bool:
    """`kubectl delete pod NAME [-n ns]`: one named pod (its deployment or job starts a new one), not in a
    namespace the cluster runs in (kube-*) nor one whose namespace, context or name says production."""
    found = _tool(inv)
    if found is None or found[0] != "kubectl":
        return False
    _name, e, args = found
    pos, values = _split(args, set(e.get("gvalued", "").split()))
    if _opt_present(args, _POD_OFF) or any(UNKNOWN in w for w in [*pos, *values]):
        return False
    if pos[:1] != ["delete"]:
        return False
    named = pos[2:] if pos[1:2] and pos[1].lower() in _POD_KINDS else pos[1:]
    if pos[1:2] and pos[1].lower() in _POD_KINDS:
        ok = len(named) == 1 and "/" not in named[0]
    else:
        ok = len(named) == 1 and named[0].split("/", 1)[0].lower() in _POD_KINDS and named[0].count("/") == 1
    return ok and not _production(inv, [*pos, *values]) and not any(v.startswith("kube-") for v in values)


def _generic(pos: list[str]) -> tuple[tuple[str, ...], dict] | None:
    """A destructive verb word the table does not list (`az aks delete`): ask, with scope applied."""
    from tether.guardian.rules_cloud import destructive_word

    for k, p in enumerate(pos[:4]):
        if destructive_word(p):
            return tuple(x.lower() for x in pos[: k + 1]), {"do": "ask"}
    return None


def _denytext(inv: Inv, pattern: str, stdin: str | None) -> bool:
    texts = [*inv.args, *([stdin] if stdin else [])]
    return any(re.search(pattern, t) for t in texts)


def _max(a: str, b: str) -> str:
    return a if _RANK[a] >= _RANK[b] else b


def _production(inv: Inv, words: list[str]) -> str:
    """The first argument or environment value that names a production target, or ''."""
    for w in words:
        if UNKNOWN not in w and _PROD.search(w):
            return w[:60]
    for k in PROD_ENV:
        val = inv.simple.env.get(k, "")
        if val and _PROD.search(val):
            return f"{k}={val}"[:60]
    return ""


def _test_database(inv: Inv, args: list[str], names: list[str]) -> bool:
    """`RAILS_ENV=test` (the tool's own variables), `--env test`, with no DATABASE_URL beside it."""
    env = inv.simple.env
    if "DATABASE_URL" in env:
        return False
    if any(re.match(TEST_VALUE, env.get(k, "")) for k in names):
        return True
    pairs = zip(args, [*args[1:], ""], strict=True)
    return any((a in ("--env", "-e", "--environment") and re.match(TEST_VALUE, b)) or
               re.match(r"^--(?:env|environment)=(?:test|testing)$", a) for a, b in pairs)


def _http(inv: Inv) -> Finding | None:
    joined = " ".join(inv.args)
    if ("_delete_by_query" in joined or "/update" in joined) and _MATCH_ALL.search(joined):
        return Finding("deny", "data", "deletes every document (match_all, *:*)")
    if "_delete_by_query" in joined:
        return Finding("ask", "data", "deletes the documents a query matches")
    if not re.search(r"(?:-X\s*|--request[ =]|--method[ =]|^|\s)DELETE\b", joined):
        return None
    urls = [a for a in inv.args if "://" in a or re.match(r"^[\w.-]*:\d+/", a)]
    urls = [u if "://" in u else "http://" + (u if not u.startswith(":") else "localhost" + u) for u in urls]
    if any(_ES_WIDE.search(u) for u in urls):
        return Finding("deny", "data", "HTTP DELETE of every index (_all, *)")
    prod = _production(inv, urls)
    if prod:
        return Finding("deny", "data", f"HTTP DELETE on a production target {prod}")
    return None


def _sql(inv: Inv, fed: str | None = None) -> Finding | None:
    """SQL that drops or truncates: deny on a production target; asks when it comes on stdin or
    from a file written in the line (`echo TRUNCATE .. | psql`, `psql -f d.sql`), which DB-001's
    look at the arguments does not see."""
    from tether.guardian.rules_cloud import SQL_DESTRUCTIVE

    texts = [*inv.args, *([inv.simple.stdin] if inv.simple.stdin else [])]
    hidden = bool(fed) and SQL_DESTRUCTIVE.search(fed or "") is not None
    if not hidden and not any(SQL_DESTRUCTIVE.search(t) for t in texts):
        return None
    prod = _production(inv, [a for a in inv.args if not SQL_DESTRUCTIVE.search(a)])
    if prod:
        return Finding("deny", "data", f"drops or truncates on a production target {prod}")
    if not hidden:
        return None
    from tether.guardian import local_databases

    if local_databases.workspace_file_db(inv) or local_databases.local_test_sql(inv, [fed or ""], SQL_DESTRUCTIVE):
        return None  # a database file (the path policy judges the write), a test database on this machine
    return Finding("ask", "data", "drops or truncates: SQL read from stdin or a file")


_RULE = {("deny", "infra"): "MGMT-001", ("ask", "infra"): "MGMT-002", ("deny", "data"): "MGMT-003",
         ("ask", "data"): "MGMT-004"}


def on_invocation(an: Analyser, inv: Inv) -> None:
    """Fire MGMT-* for this invocation; remember listers for later `$(..)`/xargs targets."""
    prog = inv.prog
    if prog not in TOOLS:
        return
    listed: set[str] = an.listed
    tool = is_lister(inv)
    if tool:
        listed.add(tool)
        return
    found = _tool(inv)
    every = False
    if found is not None and found[1].get("plans") and _destroy_plan(an, inv, found[1]["plans"].split()):
        an._hit("MGMT-001", prog, "applies a destroy plan written earlier in the line")
        return
    if found is not None:
        fed = bool({"xargs", "parallel"} & set(inv.via)) and inv.simple.upstream
        every = found[0] in listed or bool(fed and any(
            is_lister(Inv(u.argv, u)) == found[0] for u in inv.simple.upstream if u.argv))
    fed = an._stdin(inv.simple)
    if prog in _SQL_CLIS:
        fed = "\n".join(t for t in [fed, *_sql_files(an, inv)] if t) or None
    f = judge(inv, every, fed, here=not getattr(an, "elsewhere", 0))
    if f is not None and f.decision == "ask" and found is not None and _migrated_back(an, inv, found):
        return  # `alembic downgrade -1 && alembic upgrade head`: a round trip that ends where it began
    if f is not None and f.decision != "allow":
        an._hit(_RULE[(f.decision, f.category)], prog, f.detail)


_LAUNCHERS = frozenset({"npx", "bunx", "pnpx", "npm", "pnpm", "yarn", "bun", "exec", "x", "dlx", "bundle", "poetry",
                        "uv", "pipenv", "pdm", "hatch", "run"})
"""Launcher words before a migration tool in the command that migrates back up (the analyser runs the first
command's tool through the program table; the later one is only read here)."""


def _migrated_back(an: Analyser, inv: Inv, found: tuple[str, dict, list[str]]) -> bool:
    """A rollback (a verb with `redo`) followed later in the same line by the same tool migrating up."""
    name, e, args = found
    pos = _split(args, set(e.get("gvalued", "").split()))[0]
    hit = _verb(name, pos)
    redo = hit[1].get("redo", "").split() if hit else []
    later: list = getattr(an, "after", [])
    if not redo:
        return False
    from tether.guardian.unwrap import unwrap

    for s in later:
        for inner, _sudo, _via in unwrap(s.argv, lambda: None) if s.argv else []:
            while inner and (inner[0].rsplit("/", 1)[-1] in _LAUNCHERS or inner[0].startswith("-")):
                inner = inner[1:]  # `npx knex ..`, `bundle exec rails ..`, `poetry run alembic ..`
            other = _tool(Inv(inner, s)) if inner else None
            if other is None or other[0] != name:
                continue
            words = [w.lower() for w in _split(other[2], set(e.get("gvalued", "").split()))[0]]
            if any(words[: len(r.split("+"))] == r.split("+") for r in redo):
                return True
    return False


def _destroy_plan(an: Analyser, inv: Inv, opts: list[str]) -> bool:
    """`terraform plan -destroy -out=F` remembers F; `terraform apply F` then destroys (True)."""
    from tether.guardian.paths import normalise

    plans: set[str] | None = getattr(an, "destroy_plans", None)
    if plans is None:
        plans = an.destroy_plans = set()  # type: ignore[attr-defined]
    args, pos = inv.args, inv.positional
    cwd = inv.simple.cwd
    if pos[:1] == ["plan"] and any(a in opts for a in args):
        outs = [a.split("=", 1)[1] for a in args if a.startswith(("-out=", "--out="))]
        outs += [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-out", "--out")]
        plans.update(normalise(o, cwd, an.home) for o in outs if UNKNOWN not in o)
        return False
    return pos[:1] == ["apply"] and any(UNKNOWN not in p and normalise(p, cwd, an.home) in plans for p in pos[1:])


def _sql_files(an: Analyser, inv: Inv) -> list[str]:
    """The text of SQL files a client runs (`psql -f F`, `< F`), when written earlier in the line."""
    from tether.guardian.paths import normalise

    args = inv.args
    names = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-f", "--file", "-i", "--source")]
    names += [a.split("=", 1)[1] for a in args if a.startswith(("--file=", "--source="))]
    names += [r.target for r in inv.simple.redirects if r.op == "<"]
    return [an.files.get(normalise(n, inv.simple.cwd, an.home)) or "" for n in names if UNKNOWN not in n]


def coverage() -> dict[str, tuple[int, int]]:
    """(tools with aliases, verbs) per family."""
    out: Counter[str] = Counter()
    verbs: Counter[str] = Counter()
    for e in MANAGEMENT.values():
        out[e["fam"]] += 1 + len(e.get("aka", "").split())
        verbs[e["fam"]] += len(e["verbs"])
    return {k: (out[k], verbs[k]) for k in sorted(out)}


def coverage_markdown() -> str:
    """The docs table: per family, tools (with aliases), destructive verbs and examples."""
    lines = ["| family | tools with aliases | verbs | e.g. |", "|---|---|---|---|"]
    examples: dict[str, list[str]] = {}
    for name, e in MANAGEMENT.items():
        examples.setdefault(e["fam"], []).append(name)
    cov = coverage()
    for fam, (tools, verbs) in cov.items():
        lines.append(f"| {fam} | {tools} | {verbs} | {', '.join(examples[fam][:6])} |")
    lines.append(f"| **all** | **{sum(t for t, _ in cov.values())}** | **{sum(v for _, v in cov.values())}** | |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(coverage_markdown())
