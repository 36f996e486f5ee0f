"""The task runner: start or resume a run, drive its graph, always clean up.

Parts: `RunOptions`, `start_run()`, `resume_run()` (after a crash, Ctrl-C or
a pause; with `approved=` it answers the pending ask), `check_resumable()`,
`load_meta()`, and `_drive()`, which drives the graph built by
runtime.run.parts until the end or a pause and turns whatever stopped it
into an outcome (`OUTCOMES`, a table from exception type to status). Hooks
(runtime.hooks) are the seams for memory and trust.
"""

from __future__ import annotations

import logging
import secrets
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from langgraph.types import Command
from pydantic import BaseModel

from tether.common.errors import ConfigError, StateFileError, TetherError
from tether.common.events import (
    Event,
    ExecStarted,
    LessonsUsed,
    PlanAccepted,
    RunStarted,
)
from tether.common.journal import Journal
from tether.common.snapshot import SHADOW_DIR
from tether.gate.judge import ensure_snapshot
from tether.graphs.context import ApprovalMode
from tether.runtime.config import TetherConfig
from tether.runtime.hooks.base import NoHooks, RunHooks, RunRecord
from tether.runtime.models.registry import endpoint_of, model_for_run
from tether.runtime.run.checkpoints import connect, quarantine, saved_values
from tether.runtime.run.ending import changes_summary, record_end
from tether.runtime.run.files import load_meta as _load_meta
from tether.runtime.run.files import run_dir as _run_dir
from tether.runtime.run.files import save_meta as _save_meta
from tether.runtime.run.files import work_folder
from tether.runtime.run.gc import prune_run
from tether.runtime.run.parts import (
    RunParts,
    SandboxFactory,
    docker_sandbox,
    is_failure,
    run_parts,
)
from tether.runtime.run.phases import (
    after_run,
    check_goal,
    end,
    not_started,
    prepare,
    why,
)
from tether.runtime.run.record import explain_refusals, record_from
from tether.runtime.run.settings_files import META_KEY as SETTINGS_KEY
from tether.runtime.run.settings_files import record as record_settings
from tether.runtime.run.settings_files import refuse_planted
from tether.runtime.run.settle import apply, load_host_code, settle
from tether.runtime.run.starting import SandboxNotStarted
from tether.runtime.run.totals import TOTALS_KEY, totals_from_events
from tether.runtime.workspace.lock import WorkspaceLock
from tether.runtime.workspace.shadow import check_shadow_home
from tether.sandbox.errors import EngineLostError

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
    network: Literal["ask", "off"] | None = None
    """`--network off`: no command reaches the network in this run (None: `[network] mode`)."""
    started_at: float | None = None
    """When the person started waiting (the `tether run` process's start); default: now."""


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


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
    """Run a goal to a final status or a pause.

    Raises:
        WorkspaceBusyError: another live run holds the workspace (its id is named).
        ConfigError: a shadow run whose Tether home lies inside the workspace.
    """
    hooks = hooks or NoHooks()
    check_goal(options.goal, config)
    run_id = new_run_id()
    workspace = options.workspace.resolve()
    if options.shadow:
        check_shadow_home(config.home, workspace)
    work = config.runs_dir / run_id / SHADOW_DIR if options.shadow else None
    lock = WorkspaceLock(config.home, workspace, run_id, work=work).acquire()
    record: RunRecord | None = None
    try:
        record = _start(config, options, run_id, workspace, lock, hooks=hooks, model=model,
                        sandbox_factory=sandbox_factory, ask_person=ask_person, on_event=on_event)
        return record
    finally:
        lock.release(paused=record is not None and record.awaiting is not None)


def _start(config: TetherConfig, options: RunOptions, run_id: str, workspace: Path, lock: WorkspaceLock, *,
           hooks: RunHooks, model: Any, sandbox_factory: SandboxFactory, ask_person: AskPerson | None,
           on_event: OnEvent | None) -> RunRecord:
    run_dir = config.runs_dir / run_id
    endpoint = endpoint_of(config.model.model_copy(update={"spec": options.model_spec}))
    began = options.started_at or time.time()
    meta = {**options.model_dump(mode="json", exclude={"started_at"}), "run_id": run_id, "workspace": str(workspace),
            "status": "running", "phase": "preparing", "memory_context": "", "lesson_ids": [], "started_at": began,
            "attempt_started_at": began, "model_endpoint": endpoint, SETTINGS_KEY: record_settings()}
    try:
        run_dir.mkdir(parents=True)
    except OSError as e:
        msg = (
            f"cannot create the run folder {run_dir}: {e.strerror or e}; check that the home is writable and has "
            "free space"
        )
        raise StateFileError(msg) from e
    lock.attach(run_dir)
    _save_meta(run_dir, meta)  # first: a run folder always says what it is
    try:
        meta = prepare(meta, run_dir, hooks, options.shadow, config.workspace)
        ensure_snapshot(workspace, run_dir, config.workspace)
    except (KeyboardInterrupt, SystemExit) as e:
        return not_started(meta, run_dir, f"stopped while preparing ({why(e)}); continue with `tether resume {run_id}`")
    journal = Journal(run_dir / "journal.jsonl")
    journal.listeners.extend([on_event] if on_event else [])
    journal.append(
        RunStarted(
            key="run_start",
            run_id=run_id,
            goal=options.goal,
            workspace=str(workspace),
            model=options.model_spec,
            shadow=options.shadow,
        )
    )
    if meta["lesson_ids"]:
        journal.append(LessonsUsed(key="lessons", ids=meta["lesson_ids"]))
    state = _initial_state(meta, time.time())
    return _drive(
        config, meta, state, journal, hooks=hooks, model=model, sandbox_factory=sandbox_factory, ask_person=ask_person
    )


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
    model_spec: str | None = None,
    started_at: float | None = None,
) -> RunRecord:
    """Continue a run from its last checkpoint; `approved` answers the ask it paused on.

    The run talks to the model (provider and endpoint) it recorded; `model_spec`
    chooses another, recorded from then on. A run whose graph already ended is
    not run again: its result is reported, and only an after-run phase cut
    short is completed (each effect at most once).

    Raises:
        ConfigError: the config or environment points the recorded model at another endpoint (both named).
    """
    hooks = hooks or NoHooks()
    meta, values = check_resumable(config, run_id, approved)
    run_dir = _run_dir(config.runs_dir, run_id)
    if model_spec is not None:
        meta = {**meta, "model_spec": model_spec,
                "model_endpoint": endpoint_of(config.model.model_copy(update={"spec": model_spec}))}
        _save_meta(run_dir, meta)
    journal = Journal(run_dir / "journal.jsonl")
    journal.listeners.extend([on_event] if on_event else [])
    if values and values.get("status"):
        return _report_finished(config, meta, values, journal, hooks)
    work = run_dir / SHADOW_DIR if meta.get("shadow") else None
    lock = WorkspaceLock(config.home, Path(meta["workspace"]), run_id, run_folder=run_dir, work=work).acquire()
    record: RunRecord | None = None
    try:
        record = _resume(config, meta, values, run_dir, journal, approved=approved, approval=approval, hooks=hooks,
                         model=model, sandbox_factory=sandbox_factory, ask_person=ask_person,
                         from_journal=from_journal, started_at=started_at)
        return record
    finally:
        lock.release(paused=record is not None and record.awaiting is not None)


def _resume(config: TetherConfig, meta: dict[str, Any], values: dict[str, Any] | None, run_dir: Path,
            journal: Journal, *, approved: bool | None, approval: ApprovalMode | None, hooks: RunHooks, model: Any,
            sandbox_factory: SandboxFactory, ask_person: AskPerson | None, from_journal: bool,
            started_at: float | None = None) -> RunRecord:
    run_id = meta["run_id"]
    if values is None and _progressed(journal) and not from_journal:
        msg = (f"run {run_id} has no checkpoint (the checkpoint database was reset or moved aside) but its journal "
               f"shows work; restart it from the journal with `tether resume {run_id} --from-journal` "
               "(journaled commands are reused, not run again)")
        raise NoCheckpointError(msg)
    if model is None:
        model = model_for_run(config, meta)  # before anything is journaled: refuses another endpoint
    meta["attempt_started_at"] = started_at or time.time()
    if approval is not None:
        meta["approval"] = approval
    if meta.get("phase") == "preparing":
        try:
            meta = prepare(meta, run_dir, hooks, bool(meta.get("shadow")), config.workspace)
        except (KeyboardInterrupt, SystemExit) as e:
            return not_started(
                meta, run_dir, f"stopped while preparing ({why(e)}); continue with `tether resume {run_id}`"
            )
    journal.append(
        RunStarted(
            key=f"resume:{time.time()}",
            run_id=run_id,
            goal=meta["goal"],
            workspace=meta["workspace"],
            model=meta["model_spec"],
            shadow=meta.get("shadow", False),
            resumed=True,
        )
    )
    command = None if approved is None else Command(resume={"approved": approved})
    return _drive(
        config,
        meta,
        command,
        journal,
        hooks=hooks,
        model=model,
        sandbox_factory=sandbox_factory,
        ask_person=ask_person,
        require_pause=approved is not None,
    )


def check_resumable(
    config: TetherConfig, run_id: str, approved: bool | None = None
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(run.json, last checkpointed state) of a run `resume` may touch.

    NotPausedError for an answer (approve/deny) that no pause waits for.
    """
    meta = load_meta(config, run_id)
    refuse_planted(meta)  # a tether.toml the run wrote in its workspace, read from the working folder now
    values = _saved(config, run_id)
    if approved is not None and (not meta.get("awaiting") or (values or {}).get("status")):
        msg = (
            f"run {run_id} is not waiting for an approval (status {meta['status']}); see it with `tether resume "
            f"{run_id}`"
        )
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


def _report_finished(
    config: TetherConfig, meta: dict[str, Any], values: dict[str, Any], journal: Journal, hooks: RunHooks
) -> RunRecord:
    """The result of a run whose graph ended; completes only what its after-run phase left undone."""
    run_dir = _run_dir(config.runs_dir, meta["run_id"])
    record = apply(record_from(meta, values, journal.events, run_dir, None), load_host_code(run_dir))
    record = explain_refusals(record, journal.events)
    # host_code.json lost: never upgrade
    if meta.get("status") == "needs-review" and record.status in ("success", "self-verified"):
        record = record.model_copy(update={"status": "needs-review", "reason": str(meta.get("reason") or "")})
    record = record.model_copy(update={"changes": changes_summary(run_dir)})
    if meta.get("status") != record.status:
        _save_meta(run_dir, {**meta, "status": record.status, "reason": record.reason, "awaiting": None})
    end(journal, record)
    return _pruned(config, after_run(record, hooks, lambda: model_for_run(config, meta)))


def _pruned(config: TetherConfig, record: RunRecord) -> RunRecord:
    """The record, with the run's checkpoints pruned when it finished (runtime.run.gc)."""
    if record.awaiting is None and record.status != "interrupted":
        prune_run(config, record.run_id)
    return record


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
    run_id, workspace = meta["run_id"], work_folder(meta)
    run_dir = config.runs_dir / run_id
    if not workspace.is_dir():
        msg = (f"the shadow copy {workspace} of run {run_id} is gone (pruned); start the goal again"
               if meta.get("work") else f"workspace {workspace} of run {run_id} is gone; restore it to resume")
        raise ConfigError(msg)
    notices: list[str] = []
    graph_config: Any = {"configurable": {"thread_id": run_id}, "recursion_limit": RECURSION_LIMIT}
    record: RunRecord | None = None
    stopped: BaseException | None = None
    values: dict[str, Any] = {}
    try:
        with run_parts(config, meta, journal, hooks, model, sandbox_factory, notices) as parts:
            model = parts.context.model
            try:
                record = _invoke(parts, graph_input, graph_config, meta, journal, run_dir, ask_person, require_pause)
            except (NotPausedError, SandboxNotStarted):
                raise  # a sandbox that did not start (its start runs beside the planner) ends as before the graph
            except BaseException as e:
                if _outcome(e) is None:
                    raise
                stopped = e
                values = {} if isinstance(e, sqlite3.DatabaseError) else _last_values(parts.graph, graph_config, run_id)
    except SandboxNotStarted as e:
        return _not_started(config, meta, journal, e.cause)
    finally:
        if stopped is not None:
            status, reason = _outcome(stopped)(stopped, config, run_id)  # type: ignore[misc]
            record = record_from(meta, values, journal.events, run_dir, None).model_copy(
                update={"status": status, "reason": reason})
        if record is not None:  # the sandbox is gone: check what the run left; totals: what `tether runs` lists
            record = explain_refusals(settle(config, meta, run_dir, record), journal.events)
            totals = totals_from_events(journal.events, steps=record.steps, cost=record.cost,
                                        lesson_ids=meta.get("lesson_ids"))
            meta = {**meta, "status": record.status, "reason": record.reason, "awaiting": record.awaiting,
                    TOTALS_KEY: totals}
            _save_waited(run_dir, meta)
    assert record is not None
    record = record_end(config, meta, record, notices)
    end(journal, record)
    _save_waited(run_dir, meta)  # again: the wait ends when the run's end is journaled, not before
    return _pruned(config, after_run(record, hooks, lambda: model))


def _save_waited(run_dir: Path, meta: dict[str, Any]) -> None:
    """Save the run's meta with this attempt's wait closed now: what `tether runs` lists as the person's wait."""
    now = time.time()
    totals = meta[TOTALS_KEY]
    attempts = [*meta.get("attempts", []), [meta.get("attempt_started_at") or totals["started_at"], now]]
    wait = sum(b - a for a, b in attempts if isinstance(a, int | float) and isinstance(b, int | float))
    _save_meta(run_dir, {**meta, "attempts": attempts, TOTALS_KEY: {**totals, "ended_at": now, "wait_s": wait}})


def _invoke(parts: RunParts, graph_input: Any, graph_config: Any, meta: dict[str, Any], journal: Journal,
            run_dir: Path, ask_person: AskPerson | None, require_pause: bool) -> RunRecord:
    """Invoke the graph until it ends or pauses with nobody to answer; the run's record."""
    graph, run_id = parts.graph, meta["run_id"]
    if require_pause and not graph.get_state(graph_config).interrupts:
        msg = f"run {run_id} is not waiting for an approval; use `tether resume {run_id}`"
        raise NotPausedError(msg)
    if graph_input is None and not graph.get_state(graph_config).values:
        # No checkpoint: killed before the first one (nothing ran), or restarted from the
        # journal (--from-journal); either way the graph starts over and reuses journaled results.
        first = next((e for e in journal.events if isinstance(e, RunStarted)), None)
        graph_input = _initial_state(meta, first.ts if first else time.time())
    while True:
        graph.invoke(graph_input, graph_config, context=parts.context, durability="sync")
        snap = graph.get_state(graph_config)
        pending = snap.interrupts[0].value if snap.interrupts else None
        if pending is None or ask_person is None:
            break
        answer = ask_person(pending)
        if answer is None:
            break
        graph_input = Command(resume={"approved": answer})
    return record_from(meta, snap.values, journal.events, run_dir, pending if snap.next else None)


def _last_values(graph: Any, graph_config: Any, run_id: str) -> dict[str, Any]:
    """The last checkpointed state, for the record of a run stopped early."""
    try:
        return graph.get_state(graph_config).values
    except Exception as e:  # the checkpoint itself may be what failed
        log.warning("no checkpointed state for the record of run %s: %s", run_id, e)
        return {}


Outcome = Callable[[BaseException, TetherConfig, str], tuple[str, str]]


def _signal(e: BaseException, config: TetherConfig, run_id: str) -> tuple[str, str]:  # noqa: ARG001
    return "interrupted", f"{why(e)}; continue with `tether resume {run_id}`"


def _corrupt_db(e: BaseException, config: TetherConfig, run_id: str) -> tuple[str, str]:
    aside = quarantine(config.checkpoint_db, str(e))
    return "interrupted", (f"checkpoint database was corrupt ({e}); moved aside to {aside}; "
                           f"continue with `tether resume {run_id} --from-journal`")


def _state_file(e: BaseException, config: TetherConfig, run_id: str) -> tuple[str, str]:  # noqa: ARG001
    return "interrupted", f"stopped: {e}"  # a full disk or a read-only home: resumable once fixed


def _engine_lost(e: BaseException, config: TetherConfig, run_id: str) -> tuple[str, str]:  # noqa: ARG001
    return "interrupted", f"stopped: {e}; then continue with `tether resume {run_id}`"


def _error(e: BaseException, config: TetherConfig, run_id: str) -> tuple[str, str]:  # noqa: ARG001
    return "failed", f"stopped: {e}"


def _crash(e: BaseException, config: TetherConfig, run_id: str) -> tuple[str, str]:  # noqa: ARG001
    log.error("run %s crashed", run_id, exc_info=e)
    return "interrupted", f"crashed: {e!r}; continue with `tether resume`"


OUTCOMES: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], Outcome], ...] = (
    ((KeyboardInterrupt, SystemExit), _signal),
    (sqlite3.DatabaseError, _corrupt_db),
    (StateFileError, _state_file),
    (EngineLostError, _engine_lost),
    (TetherError, _error),
    (Exception, _crash),  # resumable from the last checkpoint, never left "running"
)
"""What stopped a run, first match wins -> (status, reason)."""


def _outcome(e: BaseException) -> Outcome | None:
    return next((fn for kind, fn in OUTCOMES if isinstance(e, kind)), None)


def _not_started(config: TetherConfig, meta: dict[str, Any], journal: Journal, cause: BaseException) -> RunRecord:
    """The sandbox did not start: a signal leaves the run resumable; anything else is raised, run.json says why."""
    run_id = meta["run_id"]
    run_dir = config.runs_dir / run_id
    reason = f"sandbox did not start: {why(cause)}; fix it and continue with `tether resume {run_id}`"
    if isinstance(cause, KeyboardInterrupt | SystemExit):
        record = not_started(meta, run_dir, reason)
        end(journal, record)
        return record
    _save_meta(run_dir, {**meta, "status": "failed" if is_failure(cause) else "interrupted", "reason": reason})
    raise cause
