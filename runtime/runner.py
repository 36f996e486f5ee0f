"""The task runner: build the parts of one run, drive the graph, always clean up.

Parts: `RunOptions`, `start_run()`, `resume_run()` (after a crash, Ctrl-C or
a pause; with `approved=` it answers the pending ask), `load_meta()`, and
`_drive()`, which builds model, sandbox, journal, checkpointer and graph,
runs until the end or a pause, and closes the sandbox and saves the run's
metadata in `finally`. Hooks (runtime.hooks) are the seams for memory and
trust.
"""

from __future__ import annotations

import json
import logging
import secrets
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command
from pydantic import BaseModel

from common.atomic import write_atomic
from common.errors import ConfigError, TetherError
from common.events import Event, LessonsUsed, RunEnded, RunStarted, read_events
from common.journal import Journal
from graphs.build import build_graph
from graphs.state import ApprovalMode, Deps
from guardian.gate import check_gate
from runtime.config import TetherConfig
from runtime.evidence import build_evidence, list_processes
from runtime.hooks import MemoryContext, NoHooks, RunHooks, RunInfo, RunRecord
from runtime.report import record_from
from runtime.run_totals import TOTALS_KEY, totals_from_events
from runtime.workspace_watch import WorkspaceWatch, load_start, save_start
from sandbox.base import Sandbox

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


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def docker_sandbox(workspace: Path, config: TetherConfig, run_id: str, memory_dir: Path | None) -> Sandbox:
    """The default factory: a started DockerSandbox for this run."""
    from sandbox.docker import DockerSandbox

    return DockerSandbox(workspace, config.sandbox, memory_dir=memory_dir, run_id=run_id, limits=config.workspace).start()


def load_meta(config: TetherConfig, run_id: str) -> dict[str, Any]:
    path = config.runs_dir / run_id / "run.json"
    if not path.is_file():
        msg = f"no run '{run_id}' under {config.runs_dir}; list runs with `ls {config.runs_dir}`"
        raise ConfigError(msg)
    return json.loads(path.read_text(encoding="utf-8"))


def _connect(path: Path) -> sqlite3.Connection:
    """The checkpoint database in WAL mode: a commit survives a killed process without an fsync each."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


class JournalFirstSaver(SqliteSaver):
    """A SqliteSaver that fdatasyncs the journal before saving anything.

    The journal flushes most events without an fsync each (runtime.journal);
    this keeps the order a resume relies on: whatever a node journaled is on
    disk before the checkpoint (or pending writes) that marks the node done.
    """

    def __init__(self, conn: sqlite3.Connection, journal: Journal) -> None:
        super().__init__(conn)
        self.journal = journal

    def put(self, *args: Any, **kwargs: Any) -> Any:
        self.journal.sync()
        return super().put(*args, **kwargs)

    def put_writes(self, *args: Any, **kwargs: Any) -> None:
        self.journal.sync()
        super().put_writes(*args, **kwargs)


def _save_meta(run_dir: Path, meta: dict[str, Any]) -> None:
    write_atomic(run_dir / "run.json", json.dumps(meta, indent=2, default=str))


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
    run_id = new_run_id()
    run_dir = config.runs_dir / run_id
    run_dir.mkdir(parents=True)
    workspace = options.workspace.resolve()
    info = RunInfo(run_id=run_id, goal=options.goal, workspace=workspace, run_dir=run_dir, shadow=options.shadow)
    context = hooks.before_run(info) or MemoryContext()
    save_start(run_dir, workspace, config.workspace)
    meta = {**options.model_dump(mode="json"), "run_id": run_id, "workspace": str(workspace), "status": "running",
            "memory_context": context.text, "lesson_ids": context.lesson_ids, "started_at": time.time()}
    _save_meta(run_dir, meta)
    journal = Journal(run_dir / "journal.jsonl")
    journal.listeners.extend([on_event] if on_event else [])
    journal.append(RunStarted(key="run_start", run_id=run_id, goal=options.goal, workspace=str(workspace), model=options.model_spec, shadow=options.shadow))
    if context.lesson_ids:
        journal.append(LessonsUsed(key="lessons", ids=context.lesson_ids))
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
) -> RunRecord:
    """Continue a run from its last checkpoint; `approved` answers the ask it paused on."""
    meta = load_meta(config, run_id)
    if approval is not None:
        meta["approval"] = approval
    journal = Journal(config.runs_dir / run_id / "journal.jsonl")
    journal.listeners.extend([on_event] if on_event else [])
    journal.append(RunStarted(key=f"resume:{time.time()}", run_id=run_id, goal=meta["goal"], workspace=meta["workspace"], model=meta["model_spec"], shadow=meta.get("shadow", False), resumed=True))
    command = None if approved is None else Command(resume={"approved": approved})
    return _drive(config, meta, command, journal, hooks=hooks or NoHooks(), model=model, sandbox_factory=sandbox_factory, ask_person=ask_person, require_pause=approved is not None)


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
        from runtime.models import build_chat_model

        model = build_chat_model(config.model.model_copy(update={"spec": meta["model_spec"]}))
    start = load_start(run_dir)
    watch = WorkspaceWatch(workspace, config.workspace)
    conn = _connect(config.checkpoint_db)
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
        _save_meta(run_dir, {**meta, "status": "failed", "reason": f"sandbox did not start: {e}"})
        raise
    try:
        saver = JournalFirstSaver(conn, journal)
        baseline = list_processes(sandbox)
        box = sandbox

        def gate(state: dict[str, Any]) -> dict[str, Any]:
            evidence = build_evidence(
                state, read_events(journal.path), workspace=workspace, start_manifest=start, end_manifest=watch.final(),
                processes=list_processes(box, baseline), baseline=baseline, limits=config.run,
                lessons_used=meta.get("lesson_ids", []), mount=config.sandbox.workspace_mount,
            )
            report = check_gate(evidence)
            return {"passed": report.passed, "results": [r.model_dump() for r in report.results]}

        deps = _deps(config, meta, model, sandbox, journal, hooks, gate, watch)
        graph = build_graph(deps, saver)
        if require_pause and not graph.get_state(graph_config).interrupts:
            msg = f"run {run_id} is not waiting for an approval; use `tether resume {run_id}`"
            raise NotPausedError(msg)
        if graph_input is None and not graph.get_state(graph_config).values:
            # Killed before the first checkpoint: nothing ran yet, so start the graph over.
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
    except KeyboardInterrupt:
        record = _stopped(meta, run_dir, journal, graph, graph_config, "interrupted by Ctrl-C; continue with `tether resume`", "interrupted")
    except NotPausedError:
        raise
    except TetherError as e:
        record = _stopped(meta, run_dir, journal, graph, graph_config, f"stopped: {e}", "failed")
    except Exception as e:  # a crash: resumable from the last checkpoint, never left "running"
        log.exception("run %s crashed", run_id)
        record = _stopped(meta, run_dir, journal, graph, graph_config, f"crashed: {e!r}; continue with `tether resume`", "interrupted")
    finally:
        try:
            journal.sync()
        finally:
            try:
                if sandbox is not None:
                    sandbox.close()
            finally:
                conn.close()
                if record is not None:  # totals: what `tether runs` lists without reading the journal
                    totals = totals_from_events(journal.events, steps=record.steps, cost=record.cost, lesson_ids=meta.get("lesson_ids"))
                    _save_meta(run_dir, {**meta, "status": record.status, "reason": record.reason, TOTALS_KEY: {**totals, "ended_at": time.time()}})
    journal.append(RunEnded(key=f"run_end:{time.time()}", status=record.status, reason=record.reason))
    journal.close()
    if record.status != "interrupted":
        try:
            extras = hooks.after_run(record) or {}
        except Exception as e:  # the run's outcome stands; the failure is reported, not raised
            log.exception("after-run hooks failed for run %s", run_id)
            extras = {"memory_error": f"{type(e).__name__}: {e}"}
        record = record.model_copy(update={"memory": extras})
    return record


def _stopped(meta: dict[str, Any], run_dir: Path, journal: Journal, graph: Any, graph_config: Any, reason: str, status: str) -> RunRecord:
    """The record of a run stopped early, from its last checkpoint when there is one."""
    values = graph.get_state(graph_config).values if graph is not None else {}
    rec = record_from(meta, values, journal.events, run_dir, None)
    return rec.model_copy(update={"status": status, "reason": reason})


def _deps(config: TetherConfig, meta: dict[str, Any], model: Any, sandbox: Sandbox, journal: Journal, hooks: RunHooks, gate: Any, watch: WorkspaceWatch) -> Deps:
    from guardian.checker import check

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
        snapshot=watch.snapshot, changed=watch.changed, over_limit=watch.over_limit,
    )
