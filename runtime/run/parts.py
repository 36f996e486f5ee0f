"""The parts of one run's graph, built in order and always taken down: `run_parts()`.

Parts: `RunParts` (model, workspace watch, checkpoint database, sandbox,
graph, and the `RunContext` the graph is invoked with), `SandboxFactory`,
`docker_sandbox` (the default factory) and `run_parts()`, a context manager
that builds them and, whatever happens inside, syncs the journal, closes the
sandbox (handing the workspace back), drops the watch and closes the
database. `SandboxNotStarted` (runtime.run.starting) says why a run's sandbox never started.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.common.errors import TetherError
from tether.common.events import Event, StepChanged
from tether.common.journal import Journal
from tether.gate.collect import list_processes
from tether.gate.judge import GateContext, GateSettings
from tether.gate.rerun import random_mount
from tether.gate.secrets import StreamScanner
from tether.gate.warm import WarmSides
from tether.graphs.build import build_graph
from tether.graphs.context import RunContext
from tether.graphs.network import NetworkRules
from tether.guardian.network_hosts import NetworkDefaults
from tether.runtime.config import TetherConfig
from tether.runtime.hooks.base import RunHooks
from tether.runtime.models.registry import model_for_run
from tether.runtime.run.checkpoints import JournalFirstSaver, connect
from tether.runtime.run.files import work_folder
from tether.runtime.run.phases import start_manifest
from tether.runtime.run.starting import StartingSandbox
from tether.runtime.workspace.handback import lending_record
from tether.runtime.workspace.watch import WorkspaceWatch, run_watch
from tether.sandbox.base import Sandbox

SandboxFactory = Callable[[Path, TetherConfig, str, Path | None], Sandbox]
log = logging.getLogger(__name__)


def docker_sandbox(workspace: Path, config: TetherConfig, run_id: str, memory_dir: Path | None) -> Sandbox:
    """The default factory: a started DockerSandbox for this run, with an egress proxy unless the network is off."""
    from tether.sandbox.docker import DockerSandbox
    from tether.sandbox.network import SandboxNetwork

    net = config.network
    network = SandboxNetwork(net.limits(), addresses=net.named_addresses()) if net.mode != "off" else None
    return DockerSandbox(workspace, config.sandbox, memory_dir=memory_dir, run_id=run_id, limits=config.workspace,
                         lending_record=lending_record(config.home, workspace), network=network).start()


def network_rules(config: TetherConfig, meta: dict[str, Any]) -> NetworkRules:
    """The run's network rules: `--network` (kept in the run's meta) over `[network]`."""
    net = config.network
    return NetworkRules(mode="off" if meta.get("network") == "off" else net.mode, allow=tuple(net.allow),
                        addresses=tuple(net.named_addresses()),
                        defaults=NetworkDefaults(pip_index_url=net.pip_index_url, npm_registry=net.npm_registry))


@dataclass
class RunParts:
    """Everything a run's graph is driven with."""

    context: RunContext
    graph: Any
    conn: sqlite3.Connection


def gate_settings(config: TetherConfig, meta: dict[str, Any]) -> GateSettings:
    """What the gate judges by: the person's checks and budgets from config, the run's own `--verify`."""
    return GateSettings(workspace_mount=config.sandbox.workspace_mount, verify_timeout_s=config.run.verify_timeout_s,
                        budgets=config.run, guardian=config.guardian, person_checks=list(meta.get("verify") or []),
                        host_code=config.run.host_code, accept_self_verified=config.run.accept_self_verified)


@contextmanager
def run_parts(config: TetherConfig, meta: dict[str, Any], journal: Journal, hooks: RunHooks, model: Any,
              sandbox_factory: SandboxFactory, notices: list[str] | None = None) -> Iterator[RunParts]:
    """Build the run's parts; take them down after.

    The sandbox starts in the background (runtime.run.starting): its first
    use raises SandboxNotStarted when it could not start. The gate's two
    fresh sandboxes start beside it (gate.warm: ready when the gate begins,
    however soon the model finishes), and R14's scan of the start files runs
    meanwhile.

    The sandbox works in the run's work folder (a shadow run's copy, else the
    workspace). What the person must hear about the take-down (a late
    hand-back, a step that failed) is appended to `notices`.
    """
    run_id, workspace = meta["run_id"], work_folder(meta)
    if meta.get("network") == "off":  # `--network off`: no proxy is even started
        config = config.model_copy(update={"network": config.network.model_copy(update={"mode": "off"})})
    run_dir = config.runs_dir / run_id
    memory_dir = config.memory_dir if config.memory.enabled and config.memory_dir.is_dir() else None

    gate_config = config.model_copy(update={"sandbox": config.sandbox.model_copy(
        update={"workspace_mount": random_mount()})})  # the gate's sandboxes: a mount the run never saw

    def scratch_box(scratch: Path) -> Sandbox:  # the gate's fresh sandboxes: no memory folder
        return sandbox_factory(scratch, gate_config, f"{run_id}-before", None)

    def run_box() -> Sandbox:
        box = sandbox_factory(workspace, config, run_id, memory_dir)
        box.stream_scanner = StreamScanner  # the secrets scan sees the middle the output cap drops
        return box

    baseline: list[Any] = []

    warm = WarmSides(run_dir, workspace, scratch_box)

    def ready(box: Sandbox) -> None:  # in the start's thread: the processes at its start, for R15
        baseline.append(list_processes(box))

    listener: Callable[[Event], None] | None = None
    watch: WorkspaceWatch | None = None
    conn: sqlite3.Connection | None = None
    # first: the sandbox starts while the model, the watch and the graph are built and the graph plans
    sandbox = StartingSandbox(workspace, run_box, ready)
    try:
        _start_warm(warm)  # the gate's own sandboxes, beside the run's: ready however soon the model finishes
        model = model if model is not None else model_for_run(config, meta)
        start = start_manifest(run_dir)
        warm.scan(start)  # R14's scan of the files at the start, while the run works
        watch = run_watch(run_dir, workspace, config.workspace, start)
        conn = connect(config.checkpoint_db)
        listener = _on_event(sandbox)
        gate = GateContext(
            settings=gate_settings(config, meta), workspace=workspace, run_dir=run_dir, start=start,
            final=watch.final, sandbox=sandbox, before_sandbox=scratch_box,
            lessons_used=meta.get("lesson_ids", []), baseline=lambda: (sandbox.wait(), baseline[0])[1],
            tracker=watch.tracker, warm=warm, gate_mount=gate_config.sandbox.workspace_mount,
        )
        journal.listeners.append(listener)
        context = RunContext(
            run_id=run_id, model=model, sandbox=sandbox, journal=journal, gate=gate, budgets=config.run,
            guardian=config.guardian, approvals=hooks, approval=meta.get("approval", "refuse"), watch=watch,
            workspace_mount=config.sandbox.workspace_mount, max_answer_bytes=config.model.max_answer_bytes,
            network=network_rules(config, meta),
        )
        yield RunParts(context=context, graph=build_graph(JournalFirstSaver(conn, journal)), conn=conn)
    finally:
        if listener is not None and listener in journal.listeners:
            journal.listeners.remove(listener)
        _close(journal, sandbox, conn, watch, notices if notices is not None else [], warm)


def _on_event(sandbox: StartingSandbox) -> Callable[[Event], None]:
    """A journal listener: the first step set running waits for the run's sandbox, so a sandbox that did not
    start stops the run before any command is proposed (as a start that failed before the graph did)."""
    def on_event(event: Event) -> None:
        if isinstance(event, StepChanged) and event.status == "running":
            sandbox.wait()
    return on_event


def _start_warm(warm: WarmSides) -> None:
    try:
        warm.start()
    except Exception as e:  # noqa: BLE001 - the gate starts its own then; the run goes on
        log.warning("the gate's sandboxes were not started ahead: %s", e)


def _close(journal: Journal, sandbox: Sandbox | None, conn: sqlite3.Connection | None, watch: WorkspaceWatch | None,
           notices: list[str], warm: WarmSides | None = None) -> None:
    """Sync the journal, remove the sandbox (handing the workspace back) and the gate's warm ones, close the
    database and the watch.

    Each step runs even when one before it fails; failures are logged and
    told (`notices`), since the run's own outcome is what the caller reports.
    """
    for what, step in (("sync the journal", journal.sync),
                       ("close the sandbox", sandbox.close if sandbox is not None else None),
                       ("close the gate's sandboxes", warm.close if warm is not None else None),
                       ("close the checkpoint database", conn.close if conn is not None else None),
                       ("close the workspace watch", watch.close if watch is not None else None)):
        if step is None:
            continue
        try:
            step()
        except Exception as e:  # cleanup goes on; the failure is named
            log.warning("could not %s: %s", what, e)
            notices.append(f"could not {what}: {e}")
    if sandbox is not None:
        notices.extend(sandbox.notices)


def is_failure(e: BaseException) -> bool:
    """A sandbox that did not start for a reason of ours (config, image) fails; anything else can be resumed."""
    from tether.common.errors import StateFileError

    return isinstance(e, TetherError) and not isinstance(e, StateFileError)
