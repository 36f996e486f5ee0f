"""Why a command got its decision: the line as parsed, every payload, the rules that fired.

Parts:
    Step: one thing the analyser looked at (the line, a payload, an invocation
        after unwrapping), with its depth and working folder.
    Fired: one rule that fired, where it fired, its reason and the safe
        alternative (`alternatives.ALTERNATIVES`).
    Explanation / explain: the same judgement `judge` gives (it runs `judge`,
        with an analyser that records what it sees), plus the trace.
    render: the plain-text form `tether guard --explain` prints.

Plain data and no pydantic: this runs on the `tether guard` path.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from tether.guardian.alternatives import ALTERNATIVES
from tether.guardian.analyse import Analyser
from tether.guardian.decision import LIMITS, Decision, Limits, Where
from tether.guardian.judge import judge
from tether.guardian.rules import RULES, Inv, load
from tether.guardian.words import UNKNOWN

_MAX_STEPS = 200
_MAX_TEXT = 300


@dataclass(slots=True)
class Step:
    """One thing analysed: `line` (depth 0), `payload` (text found inside), or `runs` (an invocation)."""

    depth: int
    kind: str
    text: str
    cwd: str
    via: list[str] = field(default_factory=list)
    """Wrappers stripped to reach this invocation, outermost first."""


@dataclass(slots=True)
class Fired:
    """One rule that fired, and at which step."""

    id: str
    decision: Decision
    category: str
    program: str
    reason: str
    step: int | None
    """Index into `Explanation.steps` of the invocation or payload being analysed, if any."""
    alternative: str
    never_auto_approved: bool


@dataclass(slots=True)
class Explanation:
    """A verdict with the trace that led to it."""

    command: str
    decision: Decision
    reason: str
    steps: list[Step]
    fired: list[Fired]
    decoded: list[str]
    truncated: bool = False


def _short(text: str) -> str:
    text = text.replace(UNKNOWN, "$?").replace("\n", "\\n")
    return text if len(text) <= _MAX_TEXT else text[:_MAX_TEXT] + "..."


def explain(command: str, where: Where, limits: Limits = LIMITS) -> Explanation:
    """Judge `command` like `judge` does and record why."""
    from tether.guardian import DESTRUCTIVE_CATEGORIES

    steps: list[Step] = []
    at: list[int] = []
    where_fired: dict[tuple[str, str], int | None] = {}
    state = {"truncated": False}

    def add(step: Step) -> int | None:
        if len(steps) >= _MAX_STEPS:
            state["truncated"] = True
            return None
        steps.append(step)
        return len(steps) - 1

    class Tracing(Analyser):
        def run(self, text: str, depth: int, env: dict[str, str] | None = None,
                cwd: str | None = None) -> None:
            i = add(Step(depth, "payload" if depth else "line", _short(text), cwd or self.cwd))
            at.append(i if i is not None else -1)
            try:
                super().run(text, depth, env, cwd)
            finally:
                at.pop()

        def _inv(self, inv: Inv, depth: int) -> None:
            i = add(Step(depth, "runs", _short(shlex.join(inv.argv)), inv.simple.cwd, list(inv.via)))
            at.append(i if i is not None else -1)
            try:
                super()._inv(inv, depth)
            finally:
                at.pop()

        def _hit(self, rule_id: str, program: str = "", detail: str = "") -> None:
            before = len(self.hits)
            super()._hit(rule_id, program, detail)
            if len(self.hits) > before:
                key = list(self.hits)[-1]
                where_fired[key] = at[-1] if at and at[-1] >= 0 else None

    result = judge(command, where, limits, Tracing)
    load()
    fired = [Fired(h.id, h.decision, h.category, h.program, h.reason,
                   where_fired.get((h.id, h.program)), ALTERNATIVES.get(h.id, ""),
                   h.category in DESTRUCTIVE_CATEGORIES) for h in result.hits if h.id in RULES]
    return Explanation(command, result.decision, result.reason, steps, fired, result.decoded,
                       state["truncated"])


def render(e: Explanation) -> list[str]:
    """The explanation as plain lines (the caller escapes them for its terminal)."""
    lines = [f"decision: {e.decision}", f"command:  {_short(e.command)}", "", "analysed:"]
    for i, s in enumerate(e.steps):
        label = {"line": "line", "payload": "payload", "runs": "runs"}[s.kind]
        via = f"  (via {' > '.join(s.via)})" if s.via else ""
        lines.append(f"  [{i}] {'  ' * s.depth}{label:<7} {s.text}{via}   cwd={s.cwd}")
    if e.truncated:
        lines.append(f"  ... (trace cut at {_MAX_STEPS} steps)")
    if not e.steps:
        lines.append("  (nothing: the line could not be parsed)")
    lines += ["", "rules:"]
    for f in sorted(e.fired, key=lambda f: ({"deny": 0, "ask": 1, "allow": 2}[f.decision], f.id)):
        place = f" at [{f.step}]" if f.step is not None else ""
        prog = f" ({f.program})" if f.program else ""
        lines.append(f"  {f.id} {f.decision}{prog}{place}: {f.reason}")
        if f.decision == "deny":
            trust = "a deny is final: no approval or learned trust runs it"
        elif f.never_auto_approved:
            trust = "the person must answer every time: learned trust never auto-approves this category"
        else:
            trust = "learned trust may auto-approve this kind after 5 approvals at >= 90 %"
        lines.append(f"      category {f.category}; {trust}")
        if f.alternative and f.decision != "allow":
            lines.append(f"      instead: {f.alternative}")
    if not e.fired:
        lines.append("  none fired: no risk pattern matched")
    return lines
