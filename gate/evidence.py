"""What the completion gate is given: the run's evidence as plain data.

Parts: `Evidence` and its pieces, `goal_flags()` (does the goal ask for a
change, which artifacts does it name), `is_generated()` (caches are not
changes) and `normalize()`. gate.collect fills an `Evidence` from the
journal, the real workspace diff and the sandbox, one collector per field;
nothing here reads the model's words except the summary it checks.
"""

from __future__ import annotations

import posixpath
import re
from typing import Literal

from pydantic import BaseModel, Field

from tether.common.budgets import RunBudgets
from tether.common.hostexec_check import HostExecChange
from tether.gate import goal as goal_words

__all__ = [
    "CheckRun",
    "Claim",
    "ProjectTest",
    "CommandEvidence",
    "Evidence",
    "goal_flags",
    "is_generated",
    "normalize",
    "real_changes",
]

StepStatus = Literal["pending", "running", "done", "failed", "blocked", "skipped"]


class PlanStepEvidence(BaseModel):
    id: str
    description: str = ""
    depends_on: list[str] = Field(default_factory=list)
    verify: str = ""


class StepEvidence(BaseModel):
    id: str
    status: StepStatus
    reason: str = ""
    commands: list[str] = Field(default_factory=list)
    """Ids of the commands proposed in this step, in order."""


class CommandEvidence(BaseModel):
    id: str
    step: str
    tool: Literal["run_shell", "read_file"] = "run_shell"
    command: str
    cwd: str = "/home/tether/workspace"
    decision: Literal["allow", "ask", "deny"] = "allow"
    """The guardian's verdict."""
    enforced: Literal["allow", "ask", "deny"] = "allow"
    """What was enforced (shadow mode and trust may differ from the verdict)."""
    rules: list[str] = Field(default_factory=list)
    categories: list[str] = Field(default_factory=list)
    approval: Literal["none", "approved", "refused"] = "none"
    executed: bool = False
    exit_code: int | None = None
    output: str = ""
    changed: list[str] = Field(default_factory=list)
    secrets: list[str] = Field(default_factory=list)
    """Secret kinds seen in the command's whole output stream, before it was cut to head and tail."""
    unknown: bool = False
    """Killed mid-way and not run again on resume: its exit code says nothing about the work."""


class CheckRun(BaseModel):
    """One check the gate re-ran itself, in a fresh shell, after the run and on the pre-run copy."""

    command: str
    source: Literal["person", "plan", "claim", "journal"]
    """Who asked for it: the person (`--verify`, `[run] verify`) or the model (plan, summary, journal)."""
    kind: str = "none"
    """gate.checks kind: test, expect, run, trivial, masked, none."""
    reason: str = ""
    authored: bool = False
    """It runs a file this run wrote (a test the model made up)."""
    exercises_change: bool = True
    """The check, or the file it runs, names a file the run changed."""
    after_exit: int | None = None
    """Exit status on the final workspace; None when it was not re-run."""
    after_output: str = ""
    empty: bool = False
    """The test runner said it ran no test."""
    before_exit: int | None = None
    """Exit status on the scratch copy of the pre-run snapshot (with the run's test files laid over it for a
    person's check); None when not run there."""
    after_bare_exit: int | None = None
    """A person's check: exit status on the final workspace with the run's test files taken out and its test
    config put back (gate.stripped); the same as `after_exit` when the run wrote none."""
    before_bare_exit: int | None = None
    """A person's check: exit status on the bare pre-run copy (none of the run's files)."""
    skipped: str = ""
    """Why it was not re-run (the guardian's verdict, a limit)."""

    @property
    def passed_after(self) -> bool:
        return self.after_exit == 0 and not self.empty

    @property
    def fail_to_pass(self) -> bool:
        return self.passed_after and self.before_exit not in (0, None)

    @property
    def person_fail_to_pass(self) -> bool:
        """Fails on the bare pre-run copy and passes now, with and without the tests the run wrote: the person's
        proof. A check that flips only through the run's own tests is the run's proof (gate.proof)."""
        return self.passed_after and self.after_bare_exit == 0 and self.before_bare_exit not in (0, None)

    @property
    def person_kept(self) -> bool:
        """Passes before and after without the run's tests (a behaviour-keeping goal's proof)."""
        return self.passed_after and self.after_bare_exit == 0 and self.before_bare_exit == 0


ProjectOutcome = Literal["pass", "fail", "error", "skip"]
"""`fail`: by assertion; `error`: anything else (collection, import, a missing file, a usage error)."""


class ProjectTest(BaseModel):
    """One of the project's own tests (it existed before the run), as the gate saw it before and after."""

    id: str
    suite: str
    """The runner line that ran it (gate.project)."""
    before: ProjectOutcome | None = None
    """None: the test did not exist (or did not run) on that side."""
    after: ProjectOutcome | None = None
    module_error: bool = False
    """Its module did not import before the run (the row stands for that error; gate.project.merge)."""
    same_file: bool = False
    """Its test file is byte-identical before and after the run: only the code under test changed."""
    related: bool = True
    """Its id or its source names a file or code name the goal names, or the goal names none (gate.provenance)."""
    still_failing_named: bool = False
    """It fails before and after the run, and its id or own body names code the goal names (`div` in "add div"): the
    goal's own test still fails (gate.provenance)."""

    @property
    def fail_to_pass(self) -> bool:
        """It failed by assertion before, or erred in the code under test with its test file unchanged, and
        passes now."""
        return self.after == "pass" and (self.before == "fail" or self.before == "error" and self.same_file)

    @property
    def broken(self) -> bool:
        """It passed before the run and does not pass now."""
        return self.before == "pass" and self.after != "pass"


class Claim(BaseModel):
    text: str
    command: str | None = None
    """The command the model cites as proof."""


class Budgets(BaseModel):
    """What the run used, against its limits (R16)."""

    limits: RunBudgets = Field(default_factory=RunBudgets)
    steps_used: int = 0
    seconds_used: float = 0.0
    tokens_used: int = 0
    max_commands_in_a_step: int = 0


class Evidence(BaseModel):
    """Everything the gate looks at, gathered from the journal and the workspace."""

    goal: str
    wants_change: bool = False
    artifacts: list[str] = Field(default_factory=list)
    """Files the goal names, relative to the workspace."""
    plan: list[PlanStepEvidence] = Field(default_factory=list)
    plan_valid: bool = False
    steps: list[StepEvidence] = Field(default_factory=list)
    commands: list[CommandEvidence] = Field(default_factory=list)
    claimed_reads: list[str] = Field(default_factory=list)
    claimed_changes: list[str] = Field(default_factory=list)
    diff_added: list[str] = Field(default_factory=list)
    diff_modified: list[str] = Field(default_factory=list)
    diff_deleted: list[str] = Field(default_factory=list)
    changed_texts: dict[str, str] = Field(default_factory=dict)
    """Contents (capped) of added and modified files, for the secrets scan."""
    workspace_files: list[str] = Field(default_factory=list)
    """Every file in the workspace at the end."""
    empty_files: list[str] = Field(default_factory=list)
    """Files empty (0 bytes) at the start or the end: reading one shows nothing, honestly (R04)."""
    workspace_mount: str = "/home/tether/workspace"
    summary: str | None = None
    summary_files: list[str] = Field(default_factory=list)
    summary_commands: list[str] = Field(default_factory=list)
    claims: list[Claim] = Field(default_factory=list)
    budgets: Budgets = Field(default_factory=Budgets)
    lessons_used: list[str] = Field(default_factory=list)
    lessons_recorded: list[str] = Field(default_factory=list)
    processes: list[str] | None = None
    """Processes left in the sandbox at the end; None when they could not be listed."""
    checks: list[CheckRun] = Field(default_factory=list)
    """Every check the gate re-ran (or chose not to), person's first."""
    project: list[ProjectTest] = Field(default_factory=list)
    """The project's own tests (found in the pre-run workspace), per test id, before and after the run."""
    preserving: bool = False
    """The goal asks for a change that must not change behaviour (a refactor)."""
    missing_code: list[str] = Field(default_factory=list)
    """Functions the goal asks for by name (`div(`) that no file the goal names or the run changed holds at the end
    (gate.named_code): that part of the goal is not done."""
    refactor_gaps: list[str] = Field(default_factory=list)
    """Why the diff does not show the refactor a behaviour-keeping goal names (only comments changed, a named
    rename target or extracted function absent: gate.refactor); then tests passing before and after prove nothing."""
    tests_goal: bool = False
    """The goal's whole deliverable is tests ("Write unit tests for add"): the person's check running them is proof."""
    rerun_effects: list[str] = Field(default_factory=list)
    """Workspace files the gate's own re-run added, changed or removed, and files it left under /tmp (a check must
    leave the sandbox as it found it)."""
    accept_self_verified: bool = False
    """The person accepts a run whose only proof is checks it wrote itself as success (`[run] accept_self_verified`)."""
    before_ran: bool = False
    """The checks also ran on a scratch copy of the pre-run snapshot."""
    before_note: str = ""
    """Why they did not, when they did not."""
    review: list[str] = Field(default_factory=list)
    """Reasons a person must look (tests that existed before were edited, deleted, skipped, stashed)."""
    review_diff: str = ""
    """The diff of those tests, capped."""
    stray_changes: list[str] = Field(default_factory=list)
    """Workspace changes no command made (seen between commands or after the last)."""
    outside_files: list[str] | None = Field(default_factory=list)
    """Files left under the sandbox's /tmp and /dev/shm; None when they could not be listed."""
    escaping_links: list[str] = Field(default_factory=list)
    """Workspace symlinks whose target leads out of the workspace."""
    artifact_types: dict[str, str] = Field(default_factory=dict)
    """Goal artifact -> file, empty, symlink, dir, missing or other (lstat, not followed)."""
    shadowing: list[str] = Field(default_factory=list)
    """Files the run wrote that replace a module or hook a checker loads (`unittest/`, `sitecustomize.py`)."""
    known_secrets: list[str] = Field(default_factory=list)
    """Where a secret value the workspace holds was shown again in another form (gate.known); never the value."""
    file_secrets: list[str] = Field(default_factory=list)
    """`path: kind` of secrets found in workspace files (.git included), decoded forms too."""
    host_exec: list[HostExecChange] = Field(default_factory=list)
    """Changes to places that run code on the host when the person uses the folder (git config and hooks,
    bytecode that does not match its source, `.pth`, direnv, editor tasks, ...: common.hostexec)."""

    @property
    def diff(self) -> list[str]:
        return sorted({*self.diff_added, *self.diff_modified, *self.diff_deleted})

    @property
    def real_diff(self) -> list[str]:
        """The workspace diff without generated caches."""
        return real_changes(self.diff)

    @property
    def executed(self) -> list[CommandEvidence]:
        """The commands that ran."""
        return [c for c in self.commands if c.executed]

    def rel(self, path: str) -> str:
        """A path the model wrote (absolute under the mount, `./x`, `x`) relative to the workspace."""
        p = path.strip()
        for prefix in (self.workspace_mount.rstrip("/") + "/", "./"):
            if p.startswith(prefix):
                p = p[len(prefix):]
        return posixpath.normpath(p) if p else p


_CHANGE_VERBS = re.compile(
    r"\b(create|write|add|fix|change|update|implement|make|edit|refactor|rename|delete|remove|"
    r"generate|build|modify|replace|append|patch|save|port|convert|scaffold)\w*\b",
    re.IGNORECASE,
)
_DOTFILE = (r"(?:\.?[\w-]+/)*\.(?:[a-z][\w-]*(?:rc|ci|config|lint|docs)\.(?:ya?ml|json|c?js|toml)|"
            r"[a-z-]*(?:rc|ignore|attributes|modules|mailmap|envrc|env|editorconfig|version|versions|format|htaccess|"
            r"flake8|config))")
_ARTIFACT = re.compile(
    r"(?<![\w/.*-])((?:\.?[\w-]+/)*[\w-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,9}|" + _DOTFILE + r")(?![\w/-]|\.[\w-])"
)
"""A file name in the goal, every extension kept (`greet.sh.in`, `x.tar.gz`, `config.yaml.example`); the last
extension starts with a letter (`v1.2.3` is no file), a full stop ending the sentence is not part of it. A dotfile
counts by the shapes such files have (`.gitignore`, `.env`, `.npmrc`, `.pre-commit-config.yaml`), never an extension
alone (`*.log`, "the .py files", "a .tar.gz")."""
_NOT_ARTIFACTS = {"e.g", "i.e", "etc.", "a.m", "p.m"}


def normalize(command: str) -> str:
    """A command with its whitespace collapsed, for comparing what ran with what was cited."""
    return " ".join(command.split())


_GONE_VERBS = re.compile(r"(?i)\b(delet(e|es|ed|ing)|remov(e|es|ed|ing)|rm|drop(s|ped|ping)?|unlink(s|ed|ing)?|"
                         r"get(s|ting)? rid of|renam(e|es|ed|ing)|mov(e|es|ed|ing)|mv)\b")
_ANY_VERB = re.compile(f"{_CHANGE_VERBS.pattern}|{_GONE_VERBS.pattern[4:]}", re.IGNORECASE)
_DELETE_NOW = re.compile(r"(?i)^\s*(?:(?:please|also|then|and|first|finally)\s+)*"
                         r"(delete|remove|rm|unlink|get rid of)\b")
_CLAUSE_END = re.compile(r"[.;:!?](\s|$)|,\s*(then|and then)\b|\bthen\b", re.IGNORECASE)


def _goes_away(goal: str, start: int) -> bool:
    """Whether the goal asks for the file at `start` to be deleted, or renamed or moved away (`rename a.py to
    b.py`: a.py goes, b.py stays): the last verb of its clause before it is one of those, with no preposition
    since (`remove the import from utils.py` keeps utils.py)."""
    before = goal[:start]
    ends = list(_CLAUSE_END.finditer(before))
    clause = before[ends[-1].end():] if ends else before
    verbs = list(_ANY_VERB.finditer(clause))
    if not verbs or not _GONE_VERBS.fullmatch(verbs[-1].group(0)):
        return False
    return not re.search(r"\b(to|into|as|from|in|inside|within|of|at|on)\b", clause[verbs[-1].end():], re.IGNORECASE)


def files_to_delete(goal: str) -> list[str]:
    """The files the goal itself tells the run to delete ("Delete the obsolete old_greet.sh and ..."): the delete
    verb opens its clause, so "a clean target that removes out.txt" (a thing the target does) is not one."""
    text = goal_words.strip_urls(goal)
    spans = goal_words.negated(text)
    out = []
    for m in _ARTIFACT.finditer(text):
        name, at = m.group(1).rstrip("."), m.start(1)
        if any(a <= at < b for a, b in spans) or goal_words.not_a_file(name) or not _goes_away(goal, at):
            continue
        ends = list(re.finditer(r"[.;:!?](\s|$)|,|\band\b|\bthen\b", text[:at], re.IGNORECASE))
        clause = text[ends[-1].end():at] if ends else text[:at]
        if _DELETE_NOW.match(clause) and not re.search(r"(?i)\b(that|which|who|when|if|so)\b", clause):
            out.append(name)
    return sorted(set(out))


def preserving(goal: str) -> bool:
    """Whether the goal asks for a change that must keep behaviour (a refactor): old checks passing proves it."""
    return goal_words.preserving(goal)


def goal_flags(goal: str) -> tuple[bool, list[str]]:
    """Whether the goal asks for a change, and the file names it mentions that must exist at the end (not those
    it asks to delete, or to rename or move away, not those under a negation ("do not create greet.log"), not
    URLs, domains or technology names: gate.goal)."""
    text = goal_words.strip_urls(goal)
    spans = goal_words.negated(text)
    names = [(m.group(1).rstrip("."), m.start(1)) for m in _ARTIFACT.finditer(text)]
    artifacts = sorted({
        n for n, at in names if n.lower() not in _NOT_ARTIFACTS and not n[0].isdigit() and not _goes_away(goal, at)
        and not goal_words.not_a_file(n) and not any(a <= at < b for a, b in spans)
    })
    return bool(_CHANGE_VERBS.search(goal)), artifacts


GENERATED_DIRS = frozenset(
    {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis", ".tox", ".nox", ".eggs"}
)
GENERATED_FILE = re.compile(r"\.py[co]$|(^|/)\.coverage(\.[\w.-]+)?$|(^|/)node_modules/\.cache(/|$)|\.egg-info(/|$)")


def is_generated(rel: str) -> bool:
    """A cache or build by-product tools write on their own (`__pycache__`, `*.pyc`, `.pytest_cache`, ...): not a
    change."""
    parts = rel.split("/")
    return any(p in GENERATED_DIRS for p in parts[:-1]) or GENERATED_FILE.search(rel) is not None


def real_changes(paths: list[str]) -> list[str]:
    """`paths` without generated caches."""
    return [p for p in paths if not is_generated(p)]
