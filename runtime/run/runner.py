"""The task runner: build the parts of one run, drive the graph, always clean up.

Parts: `RunOptions`, `start_run()`, `resume_run()` (after a crash, Ctrl-C or
a pause; with `approved=` it answers the pending ask), `load_meta()`, and
`_drive()`, which builds model, sandbox, journal, checkpointer and graph,
runs until the end or a pause, and closes the sandbox and saves the run's
metadata in `finally`. Hooks (runtime.hooks.base) are the seams for memory and
trust.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langgraph.types import Command
from pydantic import BaseModel
from tether.common.errors import ConfigError, StateFileError, TetherError
from tether.common.events import (
    Event,
    ExecStarted,
    LessonsUsed,
    PlanAccepted,
    RunStarted,
    read_events,
)
from tether.common.journal import Journal
from tether.gate.collect import list_processes
from tether.gate.judge import GateContext, ensure_snapshot, gate_guard, judge
from tether.gate.scan import ChangeTracker
from tether.graphs.build import build_graph
from tether.graphs.state import ApprovalMode, Deps
from tether.runtime.config import TetherConfig
from tether.runtime.hooks.base import NoHooks, RunHooks, RunRecord
from tether.runtime.run.checkpoints import JournalFirstSaver, connect, quarantine, saved_values
from tether.runtime.run.files import load_meta as _load_meta
from tether.runtime.run.files import run_dir as _run_dir
from tether.runtime.run.files import save_meta as _save_meta
from tether.runtime.run.phases import (
    after_run,
    check_goal,
    close_parts,
    end,
    not_started,
    prepare,
    start_manifest,
    why,
)
from tether.runtime.run.totals import TOTALS_KEY, totals_from_events
from tether.runtime.views.console import record_from
from tether.runtime.workspace.watch import WorkspaceWatch, start_cache
from tether.sandbox.base import Sandbox

SandboxFactory = Callable[[Path, TetherConfig, str, Path | None], Sandbox]
OnEvent = Callable[[Event], None]
AskPerson = Callable[[dict[str, Any]], bool | None]
"""Shown a pending ask; returns approved, or None to leave the run paused."""
RECURSION_LIMIT = 100_000
log = logging.getLogger(__name__)


class NotPausedError(ConfigError):
    """`approve`/`deny` was asked of a run that waits for no approval."""


class RunOptions(BaseModel):
    goal: str
    workspace: Path
    model_spec: str
    approval: ApprovalMode = "refuse"
    shadow: bool = False
    memory: bool = True
    """False for `--no-memory` baselines; kept so a resumed run stays without memory."""
    verify: list[str] = []
    """The person's checks (`--verify` and `[run] verify`); the gate re-runs them and they decide R07/R08."""


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def docker_sandbox(workspace: Path, config: TetherConfig, run_id: str, memory_dir: Path | None) -> Sandbox:
    """The default factory: a started DockerSandbox for this run."""
    from tether.sandbox.docker import DockerSandbox

    return DockerSandbox(workspace, config.sandbox, memory_dir=memory_dir, run_id=run_id, limits=config.workspace,
                         lending_record=lending_record(config, workspace)).start()


def lending_record(config: TetherConfig, workspace: Path) -> Path:
    """Where a lending of `workspace` is kept until given back: per workspace, so any later run reclaims it."""
    return config.home / "lent" / (hashlib.sha256(str(workspace).encode()).hexdigest()[:16] + ".json")


def load_meta(config: TetherConfig, run_id: str) -> dict[str, Any]:
    """run.json of a run (id validated, shape checked); one-line errors name the file and the fix."""
    return _load_meta(config.runs_dir, run_id)


class NoCheckpointError(StateFileError):
    """The run's checkpoint is gone (database reset or moved aside) but its journal is not."""


def start_run(
    config: TetherConfig,
    options: RunOptions,
    *,
    hooks: RunHooks | None = None,
    model: Any = None,
    sandbox_factory: SandboxFactory = docker_sandbox,
    ask_person: AskPerson | None = None,
    on_event: OnEvent | None = None,
) -> RunRecord:
    """Run a goal to a final status or a pause."""
    hooks = hooks or NoHooks()
    check_goal(options.goal, config)
    run_id = new_run_id()
    run_dir = config.runs_dir / run_id
    workspace = options.workspace.resolve()
    meta = {**options.model_dump(mode="json"), "run_id": run_id, "workspace": str(workspace), "status": "running",
            "phase": "preparing", "memory_context": "", "lesson_ids": [], "started_at": time.time()}
    try:
        run_dir.mkdir(parents=True)
    except OSError as e:
        msg = f"cannot create the run folder {run_dir}: {e.strerror or e}; check that the home is writable and has free space"
        raise StateFileError(msg) from e
    _save_meta(run_dir, meta)  # first: a run folder always says what it is
    try:
        meta = prepare(meta, run_dir, hooks, options.shadow, config.workspace)
        ensure_snapshot(workspace, run_dir, config.workspace)
    except (KeyboardInterrupt, SystemExit) as e:
        return not_started(meta, run_dir, f"stopped while preparing ({why(e)}); continue with `tether resume {run_id}`")
    journal = Journal(run_dir / "journal.jsonl")
    journal.listeners.extend([on_event] if on_event else [])
    journal.append(RunStarted(key="run_start", run_id=run_id, goal=options.goal, workspace=str(workspace), model=options.model_spec, shadow=options.shadow))
    if meta["lesson_ids"]:
        journal.append(LessonsUsed(key="lessons", ids=meta["lesson_ids"]))
    state = _initial_state(meta, time.time())
    return _drive(config, meta, state, journal, hooks=hooks, model=model, sandbox_factory=sandbox_factory, ask_person=ask_person)


def _initial_state(meta: dict[str, Any], started_at: float) -> dict[str, Any]:
    return {"run_id": meta["run_id"], "goal": meta["goal"], "memory_context": meta.get("memory_context", ""),
            "shadow": meta.get("shadow", False), "started_at": started_at, "tokens": 0}


def resume_run(
    config: TetherConfig,
    run_id: str,
    *,
    approved: bool | None = None,
    approval: ApprovalMode | None = None,
    hooks: RunHooks | None = None,
    model: Any = None,
    sandbox_factory: SandboxFactory = docker_sandbox,
    ask_person: AskPerson | None = None,
    on_event: OnEvent | None = None,
    from_journal: bool = False,
) -> RunRecord:
    """Continue a run from its last checkpoint; `approved` answers the ask it paused on.

    A run whose graph already ended is not run again: its result is reported,
    and only an after-run phase cut short is completed (each effect at most once).
    """
    hooks = hooks or NoHooks()
    meta, values = check_resumable(config, run_id, approved)
    run_dir = _run_dir(config.runs_dir, run_id)
    journal = Journal(run_dir / "journal.jsonl")
    journal.listeners.extend([on_event] if on_event else [])
    if values and values.get("status"):
        return _report_finished(config, meta, values, journal, hooks)
    if values is None and _progressed(journal) and not from_journal:
        msg = (f"run {run_id} has no checkpoint (the checkpoint database was reset or moved aside) but its journal "
               f"shows work; restart it from the journal with `tether resume {run_id} --from-journal` "
               "(journaled commands are reused, not run again)")
        raise NoCheckpointError(msg)
    if approval is not None:
        meta["approval"] = approval
    if meta.get("phase") == "preparing":
        try:
            meta = prepare(meta, run_dir, hooks, bool(meta.get("shadow")), config.workspace)
        except (KeyboardInterrupt, SystemExit) as e:
            return not_started(meta, run_dir, f"stopped while preparing ({why(e)}); continue with `tether resume {run_id}`")
    journal.append(RunStarted(key=f"resume:{time.time()}", run_id=run_id, goal=meta["goal"], workspace=meta["workspace"], model=meta["model_spec"], shadow=meta.get("shadow", False), resumed=True))
    command = None if approved is None else Command(resume={"approved": approved})
    return _drive(config, meta, command, journal, hooks=hooks, model=model, sandbox_factory=sandbox_factory, ask_person=ask_person, require_pause=approved is not None)


def check_resumable(config: TetherConfig, run_id: str, approved: bool | None = None) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(run.json, last checkpointed state) of a run `resume` may touch; NotPausedError for an answer nobody waits for."""
    meta = load_meta(config, run_id)
    values = _saved(config, run_id)
    if approved is not None and (not meta.get("awaiting") or (values or {}).get("status")):
        msg = f"run {run_id} is not waiting for an approval (status {meta['status']}); see it with `tether resume {run_id}`"
        raise NotPausedError(msg)
    return meta, values


def _saved(config: TetherConfig, run_id: str) -> dict[str, Any] | None:
    """The run's last checkpointed state; a database that fails to read is moved aside (None)."""
    conn = connect(config.checkpoint_db)
    try:
        return saved_values(conn, run_id)
    except sqlite3.DatabaseError as e:
        conn.close()
        quarantine(config.checkpoint_db, str(e))
        return None
    finally:
        conn.close()


def _progressed(journal: Journal) -> bool:
    """Whether the journal shows work past the start (a plan, a command)."""
    return any(isinstance(e, PlanAccepted | ExecStarted) for e in journal.events)


def _report_finished(config: TetherConfig, meta: dict[str, Any], values: dict[str, Any], journal: Journal, hooks: RunHooks) -> RunRecord:
    """The result of a run whose graph ended; completes only what its after-run phase left undone."""
    run_dir = _run_dir(config.runs_dir, meta["run_id"])
    record = record_from(meta, values, journal.events, run_dir, None)
    if meta.get("status") != record.status:
        _save_meta(run_dir, {**meta, "status": record.status, "reason": record.reason, "awaiting": None})
    end(journal, record)
    return after_run(record, hooks)


def _drive(
    config: TetherConfig,
    meta: dict[str, Any],
    graph_input: Any,
    journal: Journal,
    *,
    hooks: RunHooks,
    model: Any,
    sandbox_factory: SandboxFactory,
    ask_person: AskPerson | None,
    require_pause: bool = False,
) -> RunRecord:
    run_id, workspace = meta["run_id"], Path(meta["workspace"])
    run_dir = config.runs_dir / run_id
    if not workspace.is_dir():
        msg = f"workspace {workspace} of run {run_id} is gone; restore it to resume"
        raise ConfigError(msg)
    if model is None:
        from tether.runtime.models.registry import build_chat_model

        model = build_chat_model(config.model.model_copy(update={"spec": meta["model_spec"]}))
    start = start_manifest(run_dir)
    watch = WorkspaceWatch(workspace, config.workspace, start_cache(run_dir, start))
    conn = connect(config.checkpoint_db)
    graph_config: Any = {"configurable": {"thread_id": run_id}, "recursion_limit": RECURSION_LIMIT}
    sandbox: Sandbox | None = None
    record: RunRecord | None = None
    graph: Any = None
    memory_dir = config.memory_dir if config.memory.enabled and config.memory_dir.is_dir() else None
    try:
        sandbox = sandbox_factory(workspace, config, run_id, memory_dir)
    except BaseException as e:
        conn.close()
        journal.sync()
        reason = f"sandbox did not start: {why(e)}; fix it and continue with `tether resume {run_id}`"
        if isinstance(e, KeyboardInterrupt | SystemExit):
            record = not_started(meta, run_dir, reason)
            end(journal, record)
            return record
        status = "failed" if isinstance(e, TetherError) and not isinstance(e, StateFileError) else "interrupted"
        _save_meta(run_dir, {**meta, "status": status, "reason": reason})
        raise
    try:
        saver = JournalFirstSaver(conn, journal)
        if hasattr(sandbox, "stream_scanner"):
            from tether.gate.secrets import StreamScanner

            sandbox.stream_scanner = StreamScanner  # the secrets scan sees the middle the output cap drops
        ctx = GateContext(
            config=config, workspace=workspace, run_dir=run_dir, start=start, final=watch.final, sandbox=sandbox,
            before_sandbox=lambda scratch: sandbox_factory(scratch, config, f"{run_id}-before", None),
            guard=gate_guard(config), person_checks=list(meta.get("verify") or []),
            lessons_used=meta.get("lesson_ids", []), baseline=list_processes(sandbox),
            tracker=ChangeTracker(watch.changed),
        )

        def gate(state: dict[str, Any]) -> dict[str, Any]:
            report = judge(state, read_events(journal.path), ctx)
            return {"passed": report.passed, "results": [r.model_dump() for r in report.results],
                    "review": report.review, "review_diff": report.review_diff, "checks": report.checks}

        deps = _deps(config, meta, model, sandbox, journal, hooks, gate, watch, ctx.tracker)
        graph = build_graph(deps, saver)
        if require_pause and not graph.get_state(graph_config).interrupts:
            msg = f"run {run_id} is not waiting for an approval; use `tether resume {run_id}`"
            raise NotPausedError(msg)
        if graph_input is None and not graph.get_state(graph_config).values:
            # No checkpoint: killed before the first one (nothing ran), or restarted from the
            # journal (--from-journal); either way the graph starts over and reuses journaled results.
            first = next((e for e in journal.events if isinstance(e, RunStarted)), None)
            graph_input = _initial_state(meta, first.ts if first else time.time())
        while True:
            graph.invoke(graph_input, graph_config, durability="sync")
            snap = graph.get_state(graph_config)
            pending = snap.interrupts[0].value if snap.interrupts else None
            if pending is None or ask_person is None:
                break
            answer = ask_person(pending)
            if answer is None:
                break
            graph_input = Command(resume={"approved": answer})
        record = record_from(meta, snap.values, journal.events, run_dir, pending if snap.next else None)
    except (KeyboardInterrupt, SystemExit) as e:
        record = _stopped(meta, run_dir, journal, graph, graph_config, f"{why(e)}; continue with `tether resume {run_id}`", "interrupted")
    except NotPausedError:
        raise
    except sqlite3.DatabaseError as e:
        conn.close()
        aside = quarantine(config.checkpoint_db, str(e))
        record = _stopped(meta, run_dir, journal, None, graph_config, f"checkpoint database was corrupt ({e}); moved aside to {aside}; continue with `tether resume {run_id} --from-journal`", "interrupted")
    except StateFileError as e:  # a full disk or a read-only home: resumable once fixed
        record = _stopped(meta, run_dir, journal, graph, graph_config, f"stopped: {e}", "interrupted")
    except TetherError as e:
        record = _stopped(meta, run_dir, journal, graph, graph_config, f"stopped: {e}", "failed")
    except Exception as e:  # a crash: resumable from the last checkpoint, never left "running"
        log.exception("run %s crashed", run_id)
        record = _stopped(meta, run_dir, journal, graph, graph_config, f"crashed: {e!r}; continue with `tether resume`", "interrupted")
    finally:
        close_parts(journal, sandbox, conn)
        watch.close()
        if record is not None:  # totals: what `tether runs` lists without reading the journal
            totals = totals_from_events(journal.events, steps=record.steps, cost=record.cost, lesson_ids=meta.get("lesson_ids"))
            _save_meta(run_dir, {**meta, "status": record.status, "reason": record.reason, "awaiting": record.awaiting,
                                 TOTALS_KEY: {**totals, "ended_at": time.time()}})
    end(journal, record)
    return after_run(record, hooks)


def _stopped(meta: dict[str, Any], run_dir: Path, journal: Journal, graph: Any, graph_config: Any, reason: str, status: str) -> RunRecord:
    """The record of a run stopped early, from its last checkpoint when there is one."""
    try:
        values = graph.get_state(graph_config).values if graph is not None else {}
    except Exception as e:  # the checkpoint itself may be what failed
        log.warning("no checkpointed state for the record of run %s: %s", meta["run_id"], e)
        values = {}
    rec = record_from(meta, values, journal.events, run_dir, None)
    return rec.model_copy(update={"status": status, "reason": reason})


def _deps(config: TetherConfig, meta: dict[str, Any], model: Any, sandbox: Sandbox, journal: Journal, hooks: RunHooks, gate: Any, watch: WorkspaceWatch, tracker: ChangeTracker) -> Deps:
    from tether.guardian.checker import check

    guardian_config = config.guardian

    def guard(command: str, context: Any) -> Any:
        return check(command, context, guardian_config)

    run, run_id = config.run, meta["run_id"]
    return Deps(
        model=model, sandbox=sandbox, journal=journal, guard=guard, gate=gate,
        max_steps=run.max_steps, max_commands_per_step=run.max_commands_per_step,
        max_plan_attempts=run.max_plan_attempts, max_replans=run.max_replans,
        max_seconds=run.max_seconds, max_tokens=run.max_tokens,
        approval=meta.get("approval", "refuse"),
        decide_ask=lambda v: hooks.decide_ask(v, run_id),
        record_approval=lambda v, ok: hooks.record_approval(v, ok, run_id),
        shadow_record=lambda v, cmd, person: hooks.shadow_record(v, cmd, person, run_id),
        workspace_mount=config.sandbox.workspace_mount,
        snapshot=watch.snapshot, changed=tracker.command_changes, over_limit=watch.over_limit, stray=tracker.stray,
    )
