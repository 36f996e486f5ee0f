"""The gate node's work: gather every piece of evidence, re-run the checks, judge.

Parts: `GateContext` (what the runner hands over once per run) and
`judge()`, which builds the `Evidence` from the journal, the workspace, the
sandbox and the gate's own re-run of every check (after the run, and on a
scratch copy of the pre-run snapshot in a second sandbox), then checks it
against R01-R18. The diff of tampered tests is saved as `<run>/tests.diff`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.common.events import Event
from tether.common.limits import WorkspaceLimits
from tether.common.manifest import FileState, diff
from tether.common.snapshot import SNAPSHOT_DIR, SnapshotError, snapshot
from tether.common.walk import remove_path
from tether.gate.collect import build_evidence, commands_from_journal, list_processes
from tether.gate.evidence import Evidence, goal_flags, real_changes
from tether.gate.requirement import GateReport, check_gate
from tether.gate.rerun import (
    build_before,
    collect_checks,
    discard,
    mark_authorship,
    rerun,
    runnable,
    runs_python,
    script_files,
)
from tether.gate.scan import (
    ChangeTracker,
    artifact_types,
    escaping_links,
    file_secrets,
    outside_files,
    shadowing,
    tampering,
)
from tether.runtime.config import TetherConfig
from tether.sandbox.base import Sandbox

log = logging.getLogger(__name__)


@dataclass
class GateContext:
    """What one run's gate needs besides the state and the journal."""

    config: TetherConfig
    workspace: Path
    run_dir: Path
    start: dict[str, FileState]
    final: Callable[[], dict[str, FileState]]
    """The workspace's manifest now (a bounded walk)."""
    sandbox: Sandbox
    before_sandbox: Callable[[Path], Sandbox]
    """Starts a sandbox on a scratch folder (the pre-run copy)."""
    guard: Callable[[str], str]
    """The guardian's decision on a command the model wrote (the gate re-runs only `allow`)."""
    person_checks: list[str] = field(default_factory=list)
    lessons_used: list[str] = field(default_factory=list)
    baseline: Any = None
    """The sandbox's processes at its start (gate.collect.list_processes)."""
    tracker: ChangeTracker = field(default_factory=ChangeTracker)


def ensure_snapshot(workspace: Path, run_dir: Path, limits: WorkspaceLimits) -> None:
    """The pre-run copy the gate runs the checks on (the trust hooks may have taken it already)."""
    if (run_dir / SNAPSHOT_DIR / "manifest.json").is_file():
        return
    try:
        snapshot(workspace, run_dir, limits)
    except SnapshotError as e:  # no snapshot: the gate says so in R07 for a goal that changes something
        log.warning("no pre-run snapshot of %s: %s", workspace, e)


def gate_guard(config: TetherConfig) -> Callable[[str], str]:
    """The guardian's decision on a check the model wrote, before the gate runs it."""
    from tether.guardian.checker import check
    from tether.guardian.verdict import CheckContext

    context = CheckContext(workspace=Path(config.sandbox.workspace_mount))
    return lambda command: check(command, context, config.guardian).decision


def judge(state: dict[str, Any], events: Sequence[Event], ctx: GateContext) -> GateReport:
    """All the evidence, the gate's own checks, and the verdict R01-R18.

    The pre-run sandbox starts in a thread first, so its start overlaps the
    process listing and the scans.
    """
    cfg, ws = ctx.config, ctx.workspace
    end = ctx.final()
    delta = diff(ctx.start, end)
    written = real_changes([*delta.added, *delta.modified])
    checks = collect_checks(events, ctx.person_checks, state.get("summary") or {}, commands_from_journal(events))
    overlay = mark_authorship(checks, ws, written)
    todo = runnable(checks, ctx.guard)
    has_snapshot = (ctx.run_dir / SNAPSHOT_DIR / "manifest.json").is_file()
    wants_before = goal_flags(state.get("goal", ""))[0] or bool(real_changes(delta.changed))
    with ThreadPoolExecutor(max_workers=1) as pool:
        starting = (pool.submit(lambda: ctx.before_sandbox(build_before(ctx.run_dir, ws, overlay)))
                    if has_snapshot and wants_before and todo else None)
        try:
            ev = _evidence(state, events, ctx, end, written)
            ev.review += [f"the run changed {f}, which your check `{c.command}` runs" for c in checks
                          if c.source == "person" and c.authored for f in script_files(c, ws) if f in ctx.start and f in written]
        except BaseException:
            discard(starting)
            raise
        try:
            ev.before_ran, ev.before_note = rerun(todo, sandbox=ctx.sandbox, timeout_s=cfg.run.verify_timeout_s, starting=starting)
        except Exception as e:  # the pre-run side failing must not crash the gate: R07 says why
            ev.before_ran, ev.before_note = False, f"{type(e).__name__}: {e}"
        finally:
            with contextlib.suppress(OSError):  # by descriptor: shutil.rmtree recurses and fails on deep trees
                remove_path(ctx.run_dir / "gate-before")
    if not has_snapshot and wants_before:
        ev.before_note = "no pre-run snapshot of the workspace"
    if any(runs_python(c.command) for c in todo):
        ev.shadowing = shadowing(ctx.start, end)
    ev.checks = checks
    report = check_gate(ev)
    if report.review_diff:
        (ctx.run_dir / "tests.diff").write_text(report.review_diff, encoding="utf-8")
    return report


def _evidence(state: dict[str, Any], events: Sequence[Event], ctx: GateContext, end: dict[str, FileState], written: list[str]) -> Evidence:
    """The journal's and the workspace's evidence, with the sandbox's process and /tmp listings."""
    ws, mount = ctx.workspace, ctx.config.sandbox.workspace_mount
    ev = build_evidence(
        state, events, workspace=ws, start_manifest=ctx.start, processes=list_processes(ctx.sandbox, ctx.baseline),
        baseline=ctx.baseline, limits=ctx.config.run, lessons_used=ctx.lessons_used, mount=mount, end_manifest=end,
    )
    ev.stray_changes = sorted({*ev.stray_changes, *ctx.tracker.stray(end)})
    ev.outside_files = outside_files(ctx.sandbox)
    ev.escaping_links = escaping_links(end, mount)
    ev.artifact_types = artifact_types(ws, ev.artifacts, mount)
    ev.review, ev.review_diff = tampering(ctx.start, end, ev.commands, ctx.run_dir, ws)
    ev.file_secrets = file_secrets(ws, written, int(state.get("started_at", 0) * 1e9))
    return ev
