"""The gate node's work: gather every piece of evidence, re-run the checks, judge.

Parts: `GateSettings` (what the person configured, handed in by the
runner), `GateContext` (what one run's gate needs), `ensure_snapshot()` and
`judge()`, which collects the `Evidence` (gate.collect), re-runs every check
and the project's own tests itself (gate.sides: on a copy of the final
workspace and on a copy of the pre-run snapshot, each in a fresh sandbox)
and judges it against every registered requirement (gate.registry). The diff of tampered tests is saved as
`<run>/tests.diff`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tether.common.budgets import RunBudgets
from tether.common.events import Event
from tether.common.hostexec_check import review_lines
from tether.common.limits import WorkspaceLimits
from tether.common.manifest import FileState
from tether.common.snapshot import SNAPSHOT_DIR, SnapshotError, snapshot
from tether.common.walk import read_rel
from tether.gate.agreement import disagreements
from tether.gate.check_inputs import input_changes, project_created_inputs
from tether.gate.code_scan import code_tampering
from tether.gate.collect import Sources, collect
from tether.gate.copies import AFTER_DIR, BEFORE_DIR, build_after, build_before
from tether.gate.copies import remove as remove_copies
from tether.gate.evidence import preserving, real_changes
from tether.gate.exit_status import passed_over_uncaught
from tether.gate.git_index import untracked_tests
from tether.gate.goal import asks_for_tests, named_identifiers
from tether.gate.ignored import hidden_by_ignores
from tether.gate.js_scan import js_tampering
from tether.gate.later_code import later_code
from tether.gate.make_products import drop as drop_products
from tether.gate.make_products import products as make_products
from tether.gate.make_products import uses_make, vpath_shadows
from tether.gate.named_code import missing_names, untouched_targets
from tether.gate.project import discover, test_source
from tether.gate.project_data import project_data_changes
from tether.gate.provenance import tie
from tether.gate.refactor import refactor_gaps
from tether.gate.registry import GateReport, check_gate
from tether.gate.rerun import (
    collect_checks,
    mark_authorship,
    own_support,
    runnable,
    runs_python,
    script_files,
)
from tether.gate.runner_files import (
    implicit_changes,
    make_goal_files,
    named_build_files,
    recipe_changes,
    shadows,
)
from tether.gate.scan import ChangeTracker, shadowing
from tether.gate.sides import Outcome, Plan, rerun
from tether.gate.sniff import sniffs
from tether.gate.stripped import Strip, plan_strip
from tether.gate.tamper import build_test_changes, import_shadows, support_changes
from tether.gate.warm import WarmSides
from tether.guardian.checker import check
from tether.guardian.config import GuardianConfig
from tether.guardian.verdict import CheckContext
from tether.sandbox.base import Sandbox
from tether.sandbox.config import SANDBOX_HOME

log = logging.getLogger(__name__)
NPM_SCRIPT = re.compile(r"\b(?:npm|pnpm|yarn)\s+(?:-\S+\s+)*(?:run(?:-script)?\s+(?:-\S+\s+)*([\w:.-]+)|(t|test)\b)")


def new_scripts_only(commands: Sequence[str], snap: Path | None) -> bool:
    """Whether every npm script the person's checks run is one the pre-run package.json lacks (`npm run greet` for
    "add a greet script to package.json"): then the goal-named manifest is the change, not laid over the pre-run
    copy. A script that existed before (`npm test`) stays the person's oracle, its rewrite reviewed."""
    names = {m.group(1) or "test" for c in commands for m in NPM_SCRIPT.finditer(c)}
    if not names or snap is None:
        return False
    try:
        old = json.loads((read_rel(snap, "package.json", 1 << 20) or b"{}").decode("utf-8", "replace"))
    except ValueError:
        return False
    scripts = old.get("scripts") if isinstance(old, dict) else None
    return not names & set(scripts if isinstance(scripts, dict) else {})


class GateSettings(BaseModel):
    """The person's settings the gate judges by (the runner hands them in from tether.toml)."""

    model_config = ConfigDict(extra="forbid")

    workspace_mount: str = "/home/tether/workspace"
    """Where the workspace is inside the sandbox (paths in the journal are relative to it)."""
    verify_timeout_s: float = Field(default=120.0, gt=0, le=7 * 24 * 3600, allow_inf_nan=False)
    """Timeout of each check the gate re-runs itself."""
    budgets: RunBudgets = Field(default_factory=RunBudgets)
    """The run's budgets (R16)."""
    guardian: GuardianConfig = Field(default_factory=GuardianConfig)
    """The guardian's limits, for the checks the model wrote (the gate re-runs only `allow`)."""
    person_checks: list[str] = Field(default_factory=list)
    """The person's checks (`--verify`, `[run] verify`): they weigh most."""
    accept_self_verified: bool = False
    """Take a run whose only proof is checks it wrote itself as `success` (else it ends `self-verified`)."""
    host_code: Literal["review", "undo"] = "review"
    """`review`: changes to places that run on the host make the run need review; `undo`: the runner puts them
    back after the run, so the gate only lists them."""


@dataclass
class GateContext:
    """What one run's gate needs besides the state and the journal."""

    settings: GateSettings
    workspace: Path
    run_dir: Path
    start: dict[str, FileState]
    final: Callable[[], dict[str, FileState]]
    """The workspace's manifest now (a bounded walk)."""
    sandbox: Sandbox
    before_sandbox: Callable[[Path], Sandbox]
    """Starts a fresh sandbox on a scratch folder (the pre-run copy, the copy of the final workspace)."""
    lessons_used: list[str] = field(default_factory=list)
    baseline: Any = None
    """The sandbox's processes at its start (gate.collect.list_processes), or what gives them (a sandbox that
    starts in the background lists them once it is up)."""
    tracker: ChangeTracker = field(default_factory=ChangeTracker)
    warm: WarmSides | None = None
    """The before and after sandboxes started while the run worked (gate.warm); None: started at the gate."""
    gate_mount: str = ""
    """Where `before_sandbox` mounts the workspace (random per run, never the run's own mount): a check line naming
    the run's mount is run with this one."""

    def guard(self, command: str) -> str:
        """The guardian's decision on a check the model wrote, before the gate runs it."""
        context = CheckContext(workspace=Path(self.settings.workspace_mount), home=Path(SANDBOX_HOME))
        return check(command, context, self.settings.guardian).decision


def ensure_snapshot(workspace: Path, run_dir: Path, limits: WorkspaceLimits) -> None:
    """The pre-run copy the gate runs the checks on (the trust hooks may have taken it already)."""
    if (run_dir / SNAPSHOT_DIR / "manifest.json").is_file():
        return
    try:
        snapshot(workspace, run_dir, limits)
    except SnapshotError as e:  # no snapshot: the gate says so in R07 for a goal that changes something
        log.warning("no pre-run snapshot of %s: %s", workspace, e)


def _rerun(plan: Plan, after: tuple[Future[Sandbox], Path] | None, before: tuple[Future[Sandbox], Path] | None
           ) -> Outcome:
    try:
        return rerun(plan, after, before)
    except Exception as e:  # a sandbox that fails to start must not crash the gate: R07/R08 say why
        for c in plan.checks:
            c.skipped = c.skipped or f"the gate's sandbox failed: {type(e).__name__}"
        return Outcome(before_note=f"{type(e).__name__}: {e}")


def judge(state: dict[str, Any], events: Sequence[Event], ctx: GateContext) -> GateReport:
    """All the evidence, the gate's own checks and the project's tests, and the verdict R01-R18.

    Both fresh sandboxes (the after copy and the pre-run copy) start in
    threads first and the re-run works in them while the run's own container
    is listed and scanned here.
    """
    settings, ws = ctx.settings, ctx.workspace
    baseline = ctx.baseline() if callable(ctx.baseline) else ctx.baseline
    sources = Sources(state=state, events=events, workspace=ws, start=ctx.start, end=ctx.final(), run_dir=ctx.run_dir,
                      sandbox=ctx.sandbox, budgets=settings.budgets, mount=settings.workspace_mount,
                      baseline=baseline, lessons_used=ctx.lessons_used, tracker=ctx.tracker,
                      known=ctx.warm.known() if ctx.warm is not None else None)
    written = sources.written
    checks = collect_checks(events, settings.person_checks, sources.summary, sources.commands)
    goal_text = str(state.get("goal", ""))
    named_make = named_build_files(goal_text, ctx.start)  # the Makefile a goal names is the change: not laid over
    snap_files = ctx.run_dir / SNAPSHOT_DIR / "files"
    has_snapshot = (ctx.run_dir / SNAPSHOT_DIR / "manifest.json").is_file()
    todo = runnable(checks, ctx.guard)
    person_commands = [c.command for c in checks if c.source == "person"]
    named_manifests = ["package.json"] if "package.json" in sources.goal[1] and new_scripts_only(
        person_commands, snap_files if has_snapshot else None) else []  # "add a greet script to package.json": the
    # manifest is the change, as a named Makefile is, and not laid over the pre-run copy (rt18c H18)
    overlay = [p for p in mark_authorship(checks, ws, written) if p not in named_make and p not in named_manifests]
    plan = Plan(checks=todo, suites=discover(ctx.start, snap_files if has_snapshot else None),
                workspace=ws, timeout_s=settings.verify_timeout_s, tests_overlay=overlay,
                own_overlay=own_support(written, ctx.start, sources.goal[1]),
                strip=plan_strip(overlay, ctx.start, written, sources.goal[1]) if has_snapshot else Strip(),
                snapshot=snap_files if has_snapshot else None, mounts=(settings.workspace_mount, ctx.gate_mount))
    wants_before = sources.goal[0] or bool(real_changes(sources.delta.changed))
    runs = bool(plan.checks or plan.suites)
    runs_before = has_snapshot and wants_before and runs

    def start_after() -> Sandbox:
        return ctx.before_sandbox(build_after(ctx.run_dir, ws))

    def start_before() -> Sandbox:
        return ctx.before_sandbox(build_before(ctx.run_dir, ws, []))

    after_start, after_dir = start_after, ctx.run_dir / AFTER_DIR / SNAPSHOT_DIR / "files"
    before_start, before_dir = start_before, ctx.run_dir / BEFORE_DIR
    if ctx.warm is not None:  # the sides started while the run worked, where still fresh (gate.warm)
        if runs:
            after_start, after_dir = ctx.warm.after_side(ws, start_after, after_dir)
        if runs_before:
            before_start, before_dir = ctx.warm.before_side(start_before, before_dir)
    made = make_products(ws, ctx.start, sources.end, written, sources.goal[1] + named_make) if runs and uses_make(
        [c.command for c in plan.checks] + [s.command for s in plan.suites]) else []
    if made:  # make must build these from the run's sources on the after side, not find them built (gate.make_products)
        after_start = _then_drop(after_start, after_dir, made)
    with ThreadPoolExecutor(max_workers=4) as pool:
        # the run's /tmp (a cached property: collect's own use waits for this one) beside its processes
        pool.submit(lambda: sources.outside)
        after = pool.submit(after_start) if runs else None
        before = pool.submit(before_start) if runs_before else None
        try:
            # the re-run works in sandboxes of its own while the evidence of the run's container is collected here
            rerunning = pool.submit(_rerun, plan, (after, after_dir) if after else None,
                                    (before, before_dir) if before else None)
            try:
                ev = collect(sources)  # its processes listing runs while `listing` lists /tmp
                if settings.host_code == "review":
                    ev.review += review_lines(ev.host_exec)
                named = sources.goal[1] + named_make
                snap = snap_files if has_snapshot else None
                ev.review += import_shadows(ctx.start, sources.end, named)
                ev.review += code_tampering(ws, written) + js_tampering(ws, written)
                ev.review += later_code(sources.written, ws, snap)
                ev.review += sniffs(ctx.start, sources.end, ws, goal_text)
                ev.review += implicit_changes(ctx.start, sources.end, ws, snap, named) + shadows(ctx.start, sources.end,
                                                                                                 named)
                ev.review += build_test_changes([s.kind for s in plan.suites], ctx.start, sources.end, ws, snap, named)
                ev.review += hidden_by_ignores(ctx.start, sources.end, ws, snap, written, named)
                if uses_make([c.command for c in checks] + [s.command for s in plan.suites]):
                    ev.review += vpath_shadows(ws, ctx.start, sources.end, named)
                ev.review += support_changes(ctx.start, sources.end, snap, named,
                                             named_identifiers(goal_text, []) if not named else [], ws)
                ev.review += [line for c in checks if c.source == "person"
                              for line in input_changes(c.command, str(state.get("goal", "")), named, ctx.start,
                                                        sources.end, ws, snap_files if has_snapshot else None)]
                ev.review += untracked_tests(snap, ws, sources.end)
                ev.review += [line for c in checks if c.source == "person"
                              for line in recipe_changes(c.command, named_make, ws, snap)
                              + make_goal_files(c.command, ctx.start, sources.end, named)]
                ev.review += [line for s in plan.suites if s.kind == "make"
                              for line in make_goal_files(s.command.rsplit("; ", 1)[-1], ctx.start, sources.end, named)]
                if plan.suites:
                    ev.review += project_created_inputs(goal_text, named, ctx.start, sources.end, ws,
                                                        snap)
                    ev.review += project_data_changes(goal_text, named, ctx.start, sources.end, ws, snap)
                ev.review += [
                    f"the run changed {f}, which your check `{c.command}` runs"
                    for c in checks
                    if c.source == "person" and c.authored
                    for f in script_files(c, ws)
                    if f in ctx.start and f in written and f not in named_manifests
                ]
            finally:
                out = rerunning.result()  # the re-run closes both sandboxes in any case
        finally:
            if ctx.warm is not None:
                ctx.warm.release()  # the sides the gate did not take are removed in the background
            remove_copies(ctx.run_dir)
    ev.before_ran, ev.before_note, ev.project = out.before_ran, out.before_note, out.project
    sources_of = {s.command: test_source(s, snap_files if has_snapshot else None) for s in plan.suites}
    tie(ev.project, sources_of, ev.goal, ev.artifacts, ctx.start, sources.end, ws, snap_files if has_snapshot else None)
    ev.rerun_effects = [e for e in out.effects if e not in made]  # make rebuilt what the gate removed
    if ev.processes is not None:
        ev.processes += out.left
    if not has_snapshot and wants_before:
        ev.before_note = "no pre-run snapshot of the workspace"
    if any(runs_python(c.command) for c in plan.checks) or any(s.kind == "python" for s in plan.suites):
        ev.shadowing = shadowing(ctx.start, sources.end)
    ev.checks = checks
    ev.review += disagreements(checks, ev.project) + passed_over_uncaught(checks)
    ev.preserving, ev.tests_goal = preserving(ev.goal), asks_for_tests(ev.goal)
    ev.missing_code = missing_names(ev.goal, [ev.rel(a) for a in ev.artifacts], ctx.start, sources.end, ws)
    ev.review += untouched_targets(ev.goal, [ev.rel(a) for a in ev.artifacts], ctx.start, sources.end)
    if ev.preserving:
        ev.refactor_gaps = refactor_gaps(ev.goal, ctx.start, sources.end, ws, snap_files if has_snapshot else None)
    ev.accept_self_verified = settings.accept_self_verified
    report = check_gate(ev)
    if report.review_diff:
        (ctx.run_dir / "tests.diff").write_text(report.review_diff, encoding="utf-8")
    return report


def _then_drop(start: Callable[[], Sandbox], folder: Path, rels: list[str]) -> Callable[[], Sandbox]:
    """`start`, then the run-written make products removed from the after side's folder before any check runs."""
    def go() -> Sandbox:
        box = start()
        drop_products(folder, rels)
        return box

    return go
