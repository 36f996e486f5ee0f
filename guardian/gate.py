"""The completion gate R01-R18: a run is done only when its evidence says so.

Parts: `Requirement` and `GateReport` (data), `check_gate(evidence)` (runs
the 18 checks of SPEC section 6), and one small function per requirement.
The gate never imports the runtime or the graphs: it is handed an
`Evidence` (guardian.gate_evidence) and judges that alone. A requirement
that does not apply to a run is `n/a`, never a silent pass.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel

from guardian.gate_evidence import CommandEvidence, Evidence, find_secrets, goal_flags

__all__ = ["Evidence", "GateReport", "Requirement", "check_gate", "goal_flags"]

Status = Literal["pass", "fail", "n/a"]


class Requirement(BaseModel):
    id: str
    title: str
    status: Status
    evidence: str


class GateReport(BaseModel):
    results: list[Requirement]

    @property
    def passed(self) -> bool:
        return all(r.status != "fail" for r in self.results)

    @property
    def failed(self) -> list[str]:
        return [r.id for r in self.results if r.status == "fail"]


Result = tuple[Status, str]

CHECKERS = frozenset({
    "test", "[", "[[", "pytest", "py.test", "tox", "nox", "grep", "egrep", "fgrep", "rg", "diff", "cmp",
    "sha256sum", "sha1sum", "md5sum", "shellcheck", "ruff", "mypy", "flake8", "pylint", "jest", "vitest",
    "mocha", "ctest", "prove", "bats",
})
"""Programs whose run is a check in itself."""
CHECK_SUBCOMMANDS = {
    "make": {"test", "check", "tests"}, "npm": {"test", "t"}, "yarn": {"test"}, "pnpm": {"test"},
    "cargo": {"test", "check", "clippy"}, "go": {"test", "vet"}, "git": {"diff"},
}
"""Programs that check only with one of these subcommands."""
WRAPPERS = frozenset({"timeout", "env", "nice", "time", "command", "stdbuf", "xargs"})
TEST_SCRIPT_RE = re.compile(r"(^|/)(test[\w.-]*|[\w.-]*_test(\.\w+)?|check[\w.-]*|verify[\w.-]*)$")
SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", "|&", ";;"})


def _simple_commands(command: str) -> list[list[str]] | None:
    """argv of each simple command in a list/pipeline; None when it cannot be tokenised."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()")
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return None
    out: list[list[str]] = [[]]
    for tok in tokens:
        if tok in SEPARATORS:
            out.append([])
        else:
            out[-1].append(tok)
    return [argv for argv in out if argv]


def _program(argv: list[str]) -> list[str]:
    """argv without leading VAR=value assignments and wrapper programs (and their options)."""
    i = 0
    while i < len(argv):
        word = argv[i]
        if "=" in word and not word.startswith("-") and word.split("=", 1)[0].isidentifier():
            i += 1
        elif word.rsplit("/", 1)[-1] in WRAPPERS:
            i += 1
            while i < len(argv) and (argv[i].startswith("-") or argv[i][:1].isdigit()):
                i += 1
        else:
            break
    return argv[i:]


def _is_check(argv: list[str]) -> bool:
    argv = _program(argv)
    if not argv:
        return False
    name = argv[0].rsplit("/", 1)[-1]
    rest = argv[1:]
    if name in CHECKERS or TEST_SCRIPT_RE.search(argv[0]):
        return True
    if name in CHECK_SUBCOMMANDS:
        return bool(rest) and rest[0] in CHECK_SUBCOMMANDS[name]
    if name.startswith(("python", "bash", "sh", "node", "ruby", "perl")) or name in ("dash", "zsh"):
        if rest[:2] in (["-m", "pytest"], ["-m", "unittest"], ["-m", "doctest"]):
            return True
        scripts = [a for a in rest if not a.startswith("-")]
        return bool(scripts) and TEST_SCRIPT_RE.search(scripts[0]) is not None
    return False


def is_verification(command: str) -> bool:
    """A command counts as a check when a program it RUNS is a checker (not when a word says "test")."""
    commands = _simple_commands(command)
    return bool(commands) and any(_is_check(argv) for argv in commands)


SUCCESS_RE = re.compile(r"\b(pass(es|ed)?|succeed(s|ed)?|success(ful(ly)?)?|works?|verified|done|complete[d]?)\b", re.I)
CONFINEMENT_RE = re.compile(r"confine|outside|workspace|write-depth|depth", re.I)


def _norm(cmd: str) -> str:
    return " ".join(cmd.split())


def _rel(path: str, mount: str) -> str:
    p = path.strip()
    for prefix in (mount.rstrip("/") + "/", "./"):
        if p.startswith(prefix):
            p = p[len(prefix):]
    return p


def _names_path(command: str, path: str, mount: str) -> bool:
    """`path` appears in `command` as a whole path (bare, `./` or under the mount), not inside another word."""
    if not path:
        return False
    prefix = f"(?:\\./|{re.escape(mount.rstrip('/'))}/)?"
    return re.search(rf"(?<![\w.\-/]){prefix}{re.escape(path)}(?![\w.\-]|/[\w.\-])", command) is not None


def _verify_commands(verify: str) -> set[str]:
    """The commands a step's verify text names: the whole text, or each `backquoted` span in it."""
    return {_norm(verify), *(_norm(m) for m in re.findall(r"`([^`]+)`", verify))} - {""}


def _executed(ev: Evidence) -> list[CommandEvidence]:
    return [c for c in ev.commands if c.executed]


def _verifications(ev: Evidence) -> tuple[int, list[CommandEvidence]]:
    """Index of the last changing command, and the verification commands after it."""
    done = _executed(ev)
    last_change = max((i for i, c in enumerate(done) if c.changed), default=-1)
    verify_cmds = {v for s in ev.plan if s.verify for v in _verify_commands(s.verify)}
    checks = [
        c for c in done[last_change + 1:]
        if c.tool == "run_shell" and not c.changed
        and (is_verification(c.command) or _norm(c.command) in verify_cmds)
    ]
    return last_change, checks


def r01(ev: Evidence) -> Result:
    if ev.plan and ev.plan_valid:
        return "pass", f"{len(ev.plan)} steps, acyclic, dependencies known"
    return "fail", "no valid plan was accepted"


def r02(ev: Evidence) -> Result:
    bad = [f"{s.id}={s.status}" for s in ev.steps if s.status not in ("done", "skipped", "blocked")]
    bad += [f"{s.id}={s.status} without reason" for s in ev.steps if s.status in ("skipped", "blocked") and not s.reason]
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
    ok_cmds = [c.command for c in _executed(ev) if c.exit_code == 0]
    mount = ev.workspace_mount
    missing = [p for p in ev.claimed_reads if not any(_names_path(cmd, _rel(p, mount), mount) for cmd in ok_cmds)]
    return ("fail", "claimed but never read: " + ", ".join(missing)) if missing else ("pass", f"{len(ev.claimed_reads)} reads in journal")


def r05(ev: Evidence) -> Result:
    if not ev.claimed_changes:
        return "n/a", "no changes claimed"
    diff = set(ev.diff)
    missing = [p for p in ev.claimed_changes if _rel(p, ev.workspace_mount) not in diff]
    return ("fail", "claimed but not in diff: " + ", ".join(missing)) if missing else ("pass", "claimed changes all in diff")


def r06(ev: Evidence) -> Result:
    if not ev.wants_change:
        return "n/a", "the goal asks for no change"
    return ("pass", f"diff: {', '.join(ev.diff[:8])}") if ev.diff else ("fail", "the goal asks for a change; workspace diff is empty")


def r07(ev: Evidence) -> Result:
    last_change, checks = _verifications(ev)
    if last_change < 0 and not ev.diff:
        return ("fail", "nothing changed, nothing verified") if ev.wants_change else ("n/a", "no change to verify")
    if checks:
        return "pass", f"`{checks[-1].command}` ran after the last change"
    return "fail", "no verification command ran after the last change"


def r08(ev: Evidence) -> Result:
    last_change, checks = _verifications(ev)
    if not checks:
        if last_change < 0 and not ev.diff and not ev.wants_change:
            return "n/a", "no change to verify"
        return "fail", "no verification to succeed"
    last = checks[-1]
    return ("pass", f"`{last.command}` exit 0") if last.exit_code == 0 else ("fail", f"`{last.command}` exit {last.exit_code}")


def r09(ev: Evidence) -> Result:
    mount = ev.workspace_mount.rstrip("/")
    bad = [c.command for c in _executed(ev) if not (c.cwd == mount or c.cwd.startswith(mount + "/"))]
    bad += [c.command for c in _executed(ev) if c.decision != "allow" and any(CONFINEMENT_RE.search(k) for k in c.categories)]
    return ("fail", "outside the workspace: " + "; ".join(bad[:3])) if bad else ("pass", f"{len(_executed(ev))} commands confined to {mount}")


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
    cited = [f for f in ev.summary_files if _rel(f, ev.workspace_mount) in files]
    cited += [c for c in ev.summary_commands if _norm(c) in ran]
    return ("pass", f"cites {len(cited)} real files/commands") if cited else ("fail", "the summary cites no file or command from the run")


def r13(ev: Evidence) -> Result:
    passing = [_norm(c.command) for c in _executed(ev) if c.exit_code == 0]
    if not ev.claims:
        if ev.summary and SUCCESS_RE.search(ev.summary):
            return "fail", "the summary claims success without citing a command"
        return "n/a", "no success claimed"
    bad = [k.text for k in ev.claims if not k.command or _norm(k.command) not in passing]
    return ("fail", "unbacked: " + "; ".join(bad)) if bad else ("pass", f"{len(ev.claims)} claims backed by passing commands")


def r14(ev: Evidence) -> Result:
    hits = [f"output of `{c.command[:40]}`: {n}" for c in ev.commands for n in find_secrets(c.output)]
    hits += [f"{path}: {n}" for path, text in ev.changed_texts.items() for n in find_secrets(text)]
    return ("fail", "; ".join(hits[:4])) if hits else ("pass", f"scanned {len(ev.commands)} outputs, {len(ev.changed_texts)} files")


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
    missing = [a for a in ev.artifacts if _rel(a, ev.workspace_mount) not in have]
    return ("fail", "missing: " + ", ".join(missing)) if missing else ("pass", "present: " + ", ".join(ev.artifacts))


CHECKS: list[tuple[str, str, Callable[[Evidence], Result]]] = [
    ("R01", "a plan exists: non-empty, acyclic DAG", r01),
    ("R02", "every step reached a terminal state", r02),
    ("R03", "no done step whose last command failed", r03),
    ("R04", "claimed reads were read by a command", r04),
    ("R05", "claimed changes are in the workspace diff", r05),
    ("R06", "diff non-empty when the goal asks for a change", r06),
    ("R07", "a verification ran after the last change", r07),
    ("R08", "that verification succeeded", r08),
    ("R09", "every command stayed inside the workspace", r09),
    ("R10", "no denied command retried in another form", r10),
    ("R11", "every asked command was approved before it ran", r11),
    ("R12", "a final summary exists and cites evidence", r12),
    ("R13", "success claims backed by passing commands", r13),
    ("R14", "no secrets in outputs or the diff", r14),
    ("R15", "no processes left running", r15),
    ("R16", "within budgets (steps, time, tokens)", r16),
    ("R17", "every lesson used was recorded for revision", r17),
    ("R18", "every artifact the goal names exists", r18),
]


def check_gate(evidence: Evidence) -> GateReport:
    """Judge the evidence against R01-R18."""
    results = []
    for rid, title, fn in CHECKS:
        status, why = fn(evidence)
        results.append(Requirement(id=rid, title=title, status=status, evidence=why))
    return GateReport(results=results)
