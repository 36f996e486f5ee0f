"""The completion gate R01-R18: a run is done only when its evidence says so.

Parts: `Requirement` and `GateReport` (data), `check_gate(evidence)` (runs
the 18 checks of SPEC section 6), and one small function per requirement.
The gate never imports the runtime or the graphs: it is handed an
`Evidence` (gate.evidence) and judges that alone. A requirement
that does not apply to a run is `n/a`, never a silent pass.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel
from tether.gate.checks import classify
from tether.gate.evidence import CommandEvidence, Evidence, find_secrets, goal_flags, real_changes
from tether.gate.reads import content_reads, reads_path
from tether.gate.verify import r07, r08

__all__ = ["Evidence", "GateReport", "Requirement", "check_gate", "goal_flags"]

Status = Literal["pass", "fail", "n/a"]


class Requirement(BaseModel):
    id: str
    title: str
    status: Status
    evidence: str


class GateReport(BaseModel):
    results: list[Requirement]
    review: list[str] = []
    """Why a person must look before this counts as success (tests the run tampered with)."""
    review_diff: str = ""
    checks: list[dict] = []
    """The checks the gate re-ran, with their results before and after the run."""

    @property
    def needs_review(self) -> bool:
        return bool(self.review)

    @property
    def passed(self) -> bool:
        return all(r.status != "fail" for r in self.results)

    @property
    def failed(self) -> list[str]:
        return [r.id for r in self.results if r.status == "fail"]


Result = tuple[Status, str]


def is_verification(command: str) -> bool:
    """A command counts as a check when the parsed line's exit status is a real checker's (gate.checks)."""
    return classify(command).counts


SUCCESS_RE = re.compile(r"\b(pass(es|ed)?|succeed(s|ed)?|success(ful(ly)?)?|works?|verified|done|complete[d]?)\b", re.I)
CONFINEMENT_RE = re.compile(r"confine|outside|workspace|write-depth|depth", re.I)


def _norm(cmd: str) -> str:
    return " ".join(cmd.split())


def _rel(path: str, mount: str) -> str:
    p = path.strip()
    for prefix in (mount.rstrip("/") + "/", "./"):
        if p.startswith(prefix):
            p = p[len(prefix):]
    return posixpath.normpath(p) if p else p


def _executed(ev: Evidence) -> list[CommandEvidence]:
    return [c for c in ev.commands if c.executed]


def _diff(ev: Evidence) -> list[str]:
    """The workspace diff without generated caches."""
    return real_changes(ev.diff)


def r01(ev: Evidence) -> Result:
    if ev.plan and ev.plan_valid:
        return "pass", f"{len(ev.plan)} steps, acyclic, dependencies known"
    return "fail", "no valid plan was accepted"


def r02(ev: Evidence) -> Result:
    bad = [f"{s.id}={s.status}" for s in ev.steps if s.status not in ("done", "skipped", "blocked")]
    bad += [f"{s.id}={s.status} without reason" for s in ev.steps if s.status in ("skipped", "blocked") and not s.reason]
    ran = {c.id for c in _executed(ev)}
    bad += [f"{s.id} done without running a command" for s in ev.steps if s.status == "done" and not ran & set(s.commands)]
    if not ev.steps:
        return "fail", "no steps"
    return ("fail", "not terminal: " + ", ".join(bad)) if bad else ("pass", f"{len(ev.steps)} steps terminal")


def r03(ev: Evidence) -> Result:
    by_id = {c.id: c for c in ev.commands}
    bad = []
    for s in ev.steps:
        ran = [by_id[i] for i in s.commands if i in by_id and by_id[i].executed]
        if s.status == "done" and ran and ran[-1].exit_code != 0:
            bad.append(f"{s.id} (last: `{ran[-1].command}` exit {ran[-1].exit_code})")
    done = [s for s in ev.steps if s.status == "done"]
    if not done:
        return "n/a", "no step is done"
    return ("fail", "done with failing last command: " + ", ".join(bad)) if bad else ("pass", f"{len(done)} done steps end on exit 0")


def r04(ev: Evidence) -> Result:
    if not ev.claimed_reads:
        return "n/a", "no reads claimed"
    mount = ev.workspace_mount
    read = {_rel(p, mount) if "**" not in p else p for c in _executed(ev) if c.exit_code == 0 for p in content_reads(c.command)}
    missing = [p for p in ev.claimed_reads if not reads_path(read, _rel(p, mount))]
    if missing:
        return "fail", "claimed but no command read its content (ls or echo of a name is no read): " + ", ".join(missing)
    return "pass", f"{len(ev.claimed_reads)} files read by cat/head/grep/sed/... in the journal"


def r05(ev: Evidence) -> Result:
    if not ev.claimed_changes:
        return "n/a", "no changes claimed"
    diff = set(_diff(ev))
    missing = [p for p in ev.claimed_changes if _rel(p, ev.workspace_mount) not in diff]
    return ("fail", "claimed but not in diff: " + ", ".join(missing)) if missing else ("pass", "claimed changes all in diff")


def r06(ev: Evidence) -> Result:
    if not ev.wants_change:
        return "n/a", "the goal asks for no change"
    diff = _diff(ev)
    return ("pass", f"diff: {', '.join(diff[:8])}") if diff else ("fail", "the goal asks for a change; workspace diff is empty (caches do not count)")


def r09(ev: Evidence) -> Result:
    mount = ev.workspace_mount.rstrip("/")
    bad = [f"cwd {c.cwd}: {c.command}" for c in _executed(ev) if not (c.cwd == mount or c.cwd.startswith(mount + "/"))]
    bad += [c.command for c in _executed(ev) if c.decision != "allow" and any(CONFINEMENT_RE.search(k) for k in c.categories)]
    if ev.outside_files is None:
        bad.append("files outside the workspace (/tmp, /dev/shm) could not be listed")
    elif ev.outside_files:
        bad.append("files left outside the workspace: " + ", ".join(ev.outside_files[:5]))
    if ev.escaping_links:
        bad.append("symlinks leading out of the workspace: " + ", ".join(ev.escaping_links[:5]))
    stray = real_changes(ev.stray_changes)
    if stray:
        bad.append("changes no command made (a writer running between commands): " + ", ".join(stray[:5]))
    return ("fail", "; ".join(bad[:4])) if bad else ("pass", f"{len(_executed(ev))} commands confined to {mount}; every change made by a command")


def r10(ev: Evidence) -> Result:
    denied: set[str] = set()
    denied_cmds: set[str] = set()
    for c in ev.commands:
        if (denied & set(c.rules) and c.decision != "allow") or _norm(c.command) in denied_cmds:
            return "fail", f"`{c.command}` retries a denied command ({', '.join(sorted(denied & set(c.rules)))})"
        if c.decision == "deny":
            denied.update(c.rules)
            denied_cmds.add(_norm(c.command))
    return ("pass", f"{len(denied_cmds)} denied, none retried") if denied_cmds else ("n/a", "nothing was denied")


def r11(ev: Evidence) -> Result:
    asked = [c for c in ev.commands if c.decision == "ask"]
    if not asked:
        return "n/a", "the guardian asked about nothing"
    bad = [c.command for c in asked if c.executed and c.approval != "approved"]
    return ("fail", "ran without approval: " + "; ".join(bad)) if bad else ("pass", f"{len(asked)} asks, none ran unapproved")


def r12(ev: Evidence) -> Result:
    if not ev.summary:
        return "fail", "no final summary"
    ran = {_norm(c.command) for c in _executed(ev)}
    files = set(ev.workspace_files) | set(ev.diff)
    absent = [f for f in ev.summary_files if _rel(f, ev.workspace_mount) not in files]
    unrun = [c for c in ev.summary_commands if _norm(c) not in ran]
    if absent or unrun:
        return "fail", "cites " + "; ".join([*(f"file {f} that does not exist" for f in absent), *(f"`{c}` that never ran" for c in unrun)][:4])
    cited = len(ev.summary_files) + len(ev.summary_commands)
    return ("pass", f"cites {cited} real files/commands") if cited else ("fail", "the summary cites no file or command from the run")


def r13(ev: Evidence) -> Result:
    if not ev.claims:
        if ev.summary and SUCCESS_RE.search(ev.summary):
            return "fail", "the summary claims success without citing a command"
        return "n/a", "no claim in words; a success status is judged by R07/R08's own re-run"
    passing = {_norm(c.command) for c in _executed(ev) if c.exit_code == 0}
    rerun = {_norm(c.command): c for c in ev.checks}
    bad = []
    for k in ev.claims:
        cmd = _norm(k.command or "")
        kind = classify(cmd)
        if not cmd or cmd not in passing:
            bad.append(f"{k.text!r} cites `{cmd}`, which never ran and passed")
        elif not kind.counts:
            bad.append(f"{k.text!r} cites `{cmd}`, which is no check ({kind.reason})")
        elif cmd in rerun and not rerun[cmd].passed_after:
            bad.append(f"{k.text!r} cites `{cmd}`, which fails when the gate runs it now")
    return ("fail", "unbacked: " + "; ".join(bad[:3])) if bad else ("pass", f"{len(ev.claims)} claims backed by checks that pass now")


def r14(ev: Evidence) -> Result:
    hits = [f"output of `{c.command[:40]}`: {n}" for c in ev.commands for n in sorted({*c.secrets, *find_secrets(c.output)})]
    hits += [f"{path}: {n}" for path, text in ev.changed_texts.items() for n in find_secrets(text)]
    hits += ev.file_secrets
    hits = list(dict.fromkeys(hits))
    return ("fail", "; ".join(hits[:4])) if hits else ("pass", f"scanned {len(ev.commands)} output streams and the workspace files")


def r15(ev: Evidence) -> Result:
    if ev.processes is None:
        return "fail", "processes could not be listed"
    return ("fail", "still running: " + "; ".join(ev.processes[:4])) if ev.processes else ("pass", "no process left running")


def r16(ev: Evidence) -> Result:
    b = ev.budgets
    over = []
    if b.steps_used > b.steps_limit:
        over.append(f"steps {b.steps_used}/{b.steps_limit}")
    if b.seconds_used > b.seconds_limit:
        over.append(f"time {b.seconds_used:.0f}s/{b.seconds_limit:.0f}s")
    if b.tokens_used > b.tokens_limit:
        over.append(f"tokens {b.tokens_used}/{b.tokens_limit}")
    if b.max_commands_in_a_step > b.commands_per_step_limit:
        over.append(f"commands in a step {b.max_commands_in_a_step}/{b.commands_per_step_limit}")
    used = f"steps {b.steps_used}/{b.steps_limit}, {b.seconds_used:.1f}s/{b.seconds_limit:.0f}s, tokens {b.tokens_used}/{b.tokens_limit}"
    return ("fail", "over budget: " + ", ".join(over)) if over else ("pass", used)


def r17(ev: Evidence) -> Result:
    if not ev.lessons_used:
        return "n/a", "no lessons used"
    missing = sorted(set(ev.lessons_used) - set(ev.lessons_recorded))
    return ("fail", "not recorded: " + ", ".join(missing)) if missing else ("pass", f"{len(ev.lessons_used)} lessons recorded")


def r18(ev: Evidence) -> Result:
    if not ev.artifacts:
        return "n/a", "the goal names no artifact"
    have = set(ev.workspace_files)
    bad = []
    for a in ev.artifacts:
        kind = ev.artifact_types.get(a) or ("file" if _rel(a, ev.workspace_mount) in have else "missing")
        if kind != "file":
            bad.append(f"{a} ({kind})")
    if bad:
        return "fail", "not a non-empty regular file in the workspace: " + ", ".join(bad)
    return "pass", "present: " + ", ".join(ev.artifacts)


CHECKS: list[tuple[str, str, Callable[[Evidence], Result]]] = [
    ("R01", "a plan exists: non-empty, acyclic DAG", r01),
    ("R02", "every step reached a terminal state", r02),
    ("R03", "no done step whose last command failed", r03),
    ("R04", "claimed reads were read by a command", r04),
    ("R05", "claimed changes are in the workspace diff", r05),
    ("R06", "diff non-empty when the goal asks for a change", r06),
    ("R07", "a real check, re-run by the gate, shows the change", r07),
    ("R08", "every check passes now", r08),
    ("R09", "work stayed inside the workspace, made by commands", r09),
    ("R10", "no denied command retried in another form", r10),
    ("R11", "every asked command was approved before it ran", r11),
    ("R12", "a final summary exists and cites evidence", r12),
    ("R13", "success claims backed by passing commands", r13),
    ("R14", "no secrets in outputs or the diff", r14),
    ("R15", "no processes left running", r15),
    ("R16", "within budgets (steps, time, tokens)", r16),
    ("R17", "every lesson used was recorded for revision", r17),
    ("R18", "every artifact the goal names is a non-empty file", r18),
]


def check_gate(evidence: Evidence) -> GateReport:
    """Judge the evidence against R01-R18."""
    results = []
    for rid, title, fn in CHECKS:
        status, why = fn(evidence)
        results.append(Requirement(id=rid, title=title, status=status, evidence=why))
    checks = [c.model_dump(exclude={"after_output"}) for c in evidence.checks]
    return GateReport(results=results, review=evidence.review, review_diff=evidence.review_diff, checks=checks)
