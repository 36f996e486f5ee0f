"""The rule table: every risk pattern with a stable id, category and decision.

Parts:
    Inv: one program invocation after unwrapping (argv, flags, the Simple it
        came from, whether it runs under sudo).
    Rule: id, category, decision, program, reason, example and, for
        argv-level rules, a predicate over Inv.
    rule: decorator that registers an argv-level rule for some programs.
    static_rule: registers a rule fired elsewhere (paths, pipes, payloads).
    RULES / all_rules / rules_for / get: lookup.
    ready: what the analyser calls first: every module (`load`), or, where the
        process keeps a start-up cache, only those whose rules look at every
        invocation, the others imported by `rules_for`/`get` on first need.

The table is filled by importing the `rules_*` modules (see `load`), so the
docs, the CLI and the coverage test all read the same list.

Lazy modules (the per-call hook and `tether guard`, ~2.5 ms of their start):
the index of which module registers which programs' argv rules is built by a
full `load` and kept in the start-up cache folder (`common.rxcache.folder`),
keyed by the size and mtime of every module that registers rules; any change,
a missing or unreadable index, means a full load, never a guess. `rules_for`
orders rules the same way whichever modules are loaded and in whatever order
(by module: `rules_system` first, as the analyser imports it, then `_MODULES`
order; within a module, as registered; the rules for every program last), so the lazy and the full table give the
same hits in the same order (tests/guardian/test_lazy_passes.py).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable

from tether.common.record import dataclass, field
from tether.guardian.decision import Decision, Hit
from tether.guardian.shell import Simple

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from tether.guardian.verdict import RuleHit

CATEGORIES = (
    "filesystem-destruction", "device-write", "privilege-escalation", "credential-access",
    "persistence", "download-execute", "reverse-shell", "exfiltration", "resource-exhaustion",
    "process-control", "git-history", "package-install", "system-config", "container-escape",
    "log-tampering", "cloud-destructive", "database-destructive", "outside-workspace",
    "guardian-failure", "command-escape",
)
_MODULES = ("rules_paths", "rules_fs", "rules_git", "rules_net", "rules_system", "rules_cloud",
            "rules_code", "rules_programs", "rules_hostexec", "rules_manage", "secrets_flow", "secrets_carry",
            "host_escape", "rules_guard_off", "rules_toolconfig", "rules_packages")


@dataclass(slots=True)
class Inv:
    """One program invocation, after wrappers are stripped."""

    argv: list[str]
    simple: Simple
    sudo: bool = False
    via: list[str] = field(default_factory=list)
    """Wrappers that were stripped, outermost first."""

    @property
    def prog(self) -> str:
        return self.argv[0].rsplit("/", 1)[-1].lower() if self.argv else ""

    @property
    def args(self) -> list[str]:
        return self.argv[1:]

    @property
    def positional(self) -> list[str]:
        """Arguments that are not options (everything after `--` counts)."""
        out, rest = [], False
        for a in self.args:
            if rest or not a.startswith("-") or a == "-":
                out.append(a)
            elif a == "--":
                rest = True
        return out

    @property
    def short(self) -> set[str]:
        """Letters of short options (`-rf` -> {r, f}), before any `--`."""
        out: set[str] = set()
        for a in self.args:
            if a == "--":
                break
            if a.startswith("-") and not a.startswith("--") and len(a) > 1:
                out.update(a[1:])
        return out

    @property
    def long(self) -> set[str]:
        """Long options without values (`--force=true` -> `--force`)."""
        out: set[str] = set()
        for a in self.args:
            if a == "--":
                break
            if a.startswith("--"):
                out.add(a.split("=", 1)[0])
        return out

    def has(self, *opts: str) -> bool:
        """Whether any of the options is present (`r` short letter or `--long`)."""
        short, long = self.short, self.long
        return any((o in long) if o.startswith("--") else (o in short) for o in opts)

    @property
    def text(self) -> str:
        return " ".join(self.argv)


Test = Callable[[Inv], bool]


@dataclass(frozen=True, slots=True)
class Rule:
    """One risk pattern."""

    id: str
    category: str
    decision: Decision
    program: str
    reason: str
    example: str
    test: Test | None = None
    programs: tuple[str, ...] = ()

    def plain(self, program: str = "", detail: str = "") -> Hit:
        """A plain Hit for this rule (program defaults to the rule's own)."""
        reason = f"{self.reason} ({detail})" if detail else self.reason
        return Hit(self.id, self.category, program or self.program, self.decision, reason)

    def hit(self, program: str = "", detail: str = "") -> RuleHit:
        """A RuleHit (pydantic) for this rule."""
        from tether.guardian.verdict import RuleHit

        h = self.plain(program, detail)
        return RuleHit(id=h.id, category=h.category, program=h.program, decision=h.decision,
                       reason=h.reason)


RULES: dict[str, Rule] = {}
_BY_PROGRAM: dict[str, list[Rule]] = {}
_ANY: list[Rule] = []
_ORIGIN: dict[str, tuple[int, int]] = {}
"""Rule id -> (rank of the module that registered it, registration number): the order `rules_for` gives."""
_RANK = {name: i + 1 for i, name in enumerate(_MODULES)} | {"rules_system": 0}
_EAGER = frozenset({"rules_hostexec"})
"""Rules modules a lazy table still imports at once: importing them changes another module's tables
(`rules_hostexec` adds its write places to `rules_paths.PATH_RULES`, which every write is checked against).
tests/guardian/test_lazy_passes.py fails for a lazy module whose import changes anything outside itself."""
_SORTED: dict[str, list[Rule]] = {}
"""rules_for's answers, by program (cleared whenever a rule is added)."""
_LAZY: dict[str, object] = {}
"""The index of a lazy table (`ready`): "progs" program -> modules with argv rules for it, "ids" rule id ->
module; empty when every module is loaded (or the table is not lazy)."""


def _add(r: Rule, module: str = "") -> Rule:
    if r.id in RULES:
        msg = f"duplicate rule id {r.id}"
        raise ValueError(msg)
    if r.category not in CATEGORIES:
        msg = f"unknown category {r.category} in {r.id}"
        raise ValueError(msg)
    RULES[r.id] = r
    _ORIGIN[r.id] = (_RANK.get(module.rsplit(".", 1)[-1], len(_RANK)), len(_ORIGIN))
    _SORTED.clear()
    for p in r.programs:
        _BY_PROGRAM.setdefault(p, []).append(r)
    if r.test is not None and not r.programs:
        _ANY.append(r)
    return r


def rule(id: str, category: str, decision: Decision, programs: tuple[str, ...] | str,
         reason: str, example: str, program: str = "") -> Callable[[Test], Test]:
    """Register an argv-level rule; `programs` empty means every invocation."""
    progs = (programs,) if isinstance(programs, str) else programs
    module = sys._getframe(1).f_globals.get("__name__", "")  # noqa: SLF001 - the registering module (`_ORIGIN`)

    def deco(fn: Test) -> Test:
        _add(Rule(id, category, decision, program or (progs[0] if progs else ""), reason,
                  example, fn, progs), module)
        return fn

    return deco


def static_rule(id: str, category: str, decision: Decision, reason: str, example: str,
                program: str = "") -> Rule:
    """Register a rule that the analyser fires itself (paths, pipes, payloads)."""
    module = sys._getframe(1).f_globals.get("__name__", "")  # noqa: SLF001 - the registering module (`_ORIGIN`)
    return _add(Rule(id, category, decision, program, reason, example), module)


def load() -> None:
    """Import every rules module once (they register themselves)."""
    for name in _MODULES:
        importlib.import_module(f"tether.guardian.{name}")
    _LAZY.clear()


def _key() -> list[tuple[str, int, int]] | None:
    """Size and mtime of rules.py and every module that registers rules (None when one cannot be read)."""
    import os

    folder = os.path.dirname(__file__)
    out = []
    for name in ("rules", *_MODULES):
        try:
            st = os.stat(os.path.join(folder, f"{name}.py"))
        except OSError:
            return None
        out.append((name, st.st_size, st.st_mtime_ns))
    return out


def _index() -> dict[str, object]:
    """The lazy index of the full table (every module loaded): programs and rule ids -> registering module."""
    load()
    progs: dict[str, list[str]] = {}
    ids: dict[str, str] = {}
    names = {v: k for k, v in _RANK.items()}
    for rid, (rank, _) in _ORIGIN.items():
        module = names.get(rank, "")
        if not module:
            continue  # registered outside the rules modules (a test): loaded whenever it is needed
        ids[rid] = module
        for p in RULES[rid].programs:
            progs.setdefault(p, [])
            if module not in progs[p]:
                progs[p].append(module)
    anys = sorted(({ids.get(r.id, "") for r in _ANY} | _EAGER) - {""})
    return {"progs": progs, "ids": ids, "any": anys}


def ready() -> None:
    """Make the table ready to judge with: every module, or (where the process keeps a start-up cache and the
    index in it matches the modules) those with rules for every invocation, the others on first need."""
    if _LAZY or all(f"tether.guardian.{n}" in sys.modules for n in _MODULES):
        return
    import marshal
    import os

    from tether.common import rxcache

    folder = rxcache.folder()
    key = _key() if folder is not None else None
    if folder is None or key is None:
        load()
        return
    path = os.path.join(folder, "rules-index.marshal")
    raw = rxcache.read_private(path, 1 << 20)
    try:
        index = marshal.loads(raw) if raw is not None else None
    except Exception:  # noqa: BLE001 - torn or foreign: rebuilt below
        index = None
    if not (isinstance(index, dict) and index.get("key") == key and isinstance(index.get("progs"), dict)
            and isinstance(index.get("ids"), dict) and isinstance(index.get("any"), list)):
        index = {"key": key, **_index()}
        rxcache.write_private(path, marshal.dumps(index))
        return  # everything is loaded now
    for name in index["any"]:
        _import(name)
    _LAZY.update(index)


def _import(name: str) -> None:
    if name in _RANK:  # only the rules modules, whatever a damaged index names
        importlib.import_module(f"tether.guardian.{name}")


def rules_for(prog: str) -> list[Rule]:
    """Argv-level rules that look at invocations of `prog`, in one order whatever was loaded first."""
    if _LAZY:
        for name in _LAZY["progs"].get(prog, ()):  # type: ignore[attr-defined]
            if f"tether.guardian.{name}" not in sys.modules:
                _import(name)
    got = _SORTED.get(prog)
    if got is None:
        got = sorted(_BY_PROGRAM.get(prog, []), key=lambda r: _ORIGIN[r.id]) + sorted(_ANY, key=lambda r: _ORIGIN[r.id])
        _SORTED[prog] = got
    return got


def has_rules(prog: str) -> bool:
    """Whether argv-level rules look at `prog` by name."""
    return prog in _BY_PROGRAM or bool(_LAZY) and prog in _LAZY["progs"]  # type: ignore[operator]


def program_names() -> list[str]:
    """Every program that argv-level rules look at by name."""
    if _LAZY:
        return sorted(set(_BY_PROGRAM) | set(_LAZY["progs"]))  # type: ignore[call-overload]
    return sorted(_BY_PROGRAM)


def find(rule_id: str) -> Rule:
    """The rule with this id, importing its module when the table is lazy and it is not loaded yet."""
    got = RULES.get(rule_id)
    if got is None:
        name = _LAZY.get("ids", {}).get(rule_id) if _LAZY else None  # type: ignore[attr-defined]
        if name:
            _import(name)
        if rule_id not in RULES:
            load()
        got = RULES[rule_id]
    return got


def all_rules() -> list[Rule]:
    """Every registered rule, ordered by id."""
    load()
    return sorted(RULES.values(), key=lambda r: (r.id.split("-")[0], r.id))


def get(rule_id: str) -> Rule:
    """The rule with this id."""
    return find(rule_id)
