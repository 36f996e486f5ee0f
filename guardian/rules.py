"""The rule table: every risk pattern with a stable id, category and decision.

Parts:
    Inv: one program invocation after unwrapping (argv, flags, the Simple it
        came from, whether it runs under sudo).
    Rule: id, category, decision, program, reason, example and, for
        argv-level rules, a predicate over Inv.
    rule: decorator that registers an argv-level rule for some programs.
    static_rule: registers a rule fired elsewhere (paths, pipes, payloads).
    RULES / all_rules / rules_for / get: lookup.

The table is filled by importing the `rules_*` modules (see `load`), so the
docs, the CLI and the coverage test all read the same list.
"""

from __future__ import annotations

import importlib
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


def _add(r: Rule) -> Rule:
    if r.id in RULES:
        msg = f"duplicate rule id {r.id}"
        raise ValueError(msg)
    if r.category not in CATEGORIES:
        msg = f"unknown category {r.category} in {r.id}"
        raise ValueError(msg)
    RULES[r.id] = r
    for p in r.programs:
        _BY_PROGRAM.setdefault(p, []).append(r)
    if r.test is not None and not r.programs:
        _ANY.append(r)
    return r


def rule(id: str, category: str, decision: Decision, programs: tuple[str, ...] | str,
         reason: str, example: str, program: str = "") -> Callable[[Test], Test]:
    """Register an argv-level rule; `programs` empty means every invocation."""
    progs = (programs,) if isinstance(programs, str) else programs

    def deco(fn: Test) -> Test:
        _add(Rule(id, category, decision, program or (progs[0] if progs else ""), reason,
                  example, fn, progs))
        return fn

    return deco


def static_rule(id: str, category: str, decision: Decision, reason: str, example: str,
                program: str = "") -> Rule:
    """Register a rule that the analyser fires itself (paths, pipes, payloads)."""
    return _add(Rule(id, category, decision, program, reason, example))


def load() -> None:
    """Import every rules module once (they register themselves)."""
    for name in _MODULES:
        importlib.import_module(f"tether.guardian.{name}")


def rules_for(prog: str) -> list[Rule]:
    """Argv-level rules that look at invocations of `prog`."""
    return _BY_PROGRAM.get(prog, []) + _ANY


def has_rules(prog: str) -> bool:
    """Whether argv-level rules look at `prog` by name."""
    return prog in _BY_PROGRAM


def all_rules() -> list[Rule]:
    """Every registered rule, ordered by id."""
    load()
    return sorted(RULES.values(), key=lambda r: (r.id.split("-")[0], r.id))


def get(rule_id: str) -> Rule:
    """The rule with this id."""
    load()
    return RULES[rule_id]
