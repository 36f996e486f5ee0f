"""The phases of a run around its graph: preparing it, ending it, and its after-run effects.

Parts: `check_goal` (size and text of a goal), `prepare` (recall, trust
snapshot, start manifest; run.json is written before it), `not_started`,
`why` (a non-empty one-line reason for any exception, signals included),
`end` (one run_end per attempt), `after_run` (memory and trust effects, at
most once per run: run.files.AfterRun) and `start_manifest`.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from tether.common.errors import ConfigError, StateFileError
from tether.common.events import RunEnded, RunStarted
from tether.common.journal import Journal
from tether.common.limits import WorkspaceLimits
from tether.common.manifest import FileState
from tether.runtime.config import TetherConfig
from tether.runtime.hooks.base import MemoryContext, RunHooks, RunInfo, RunRecord
from tether.runtime.run.files import AfterRun, save_meta, work_folder
from tether.runtime.workspace.shadow import make_shadow_copy
from tether.runtime.workspace.watch import START_MANIFEST, load_start, save_start

log = logging.getLogger(__name__)


def check_goal(goal: str, config: TetherConfig) -> None:
    """Refuse a goal over run.max_goal_bytes (it would crowd every prompt) or not valid text."""
    size = len(goal.encode("utf-8", errors="surrogatepass"))
    if size > config.run.max_goal_bytes:
        msg = (f"the goal is {size} bytes, over run.max_goal_bytes ({config.run.max_goal_bytes}); "
               "shorten it (put long material in a file in the workspace and name the file)")
        raise ConfigError(msg)
    try:
        goal.encode("utf-8")
    except UnicodeEncodeError as e:
        msg = "the goal is not valid UTF-8 text; pass it as text (e.g. re-encode the file with `iconv -t UTF-8`)"
        raise ConfigError(msg) from e


def prepare(
    meta: dict[str, Any], run_dir: Path, hooks: RunHooks, shadow: bool, limits: WorkspaceLimits
) -> dict[str, Any]:
    """Recall memory, snapshot the workspace (trust), make a shadow run's copy, record the start manifest.

    Nothing runs yet. A shadow run works on `meta["work"]`, a copy made from
    its snapshot (runtime.workspace.shadow); it never starts without one. A
    run stopped here resumes by preparing again (resume_run).
    """
    workspace = Path(meta["workspace"])
    info = RunInfo(run_id=meta["run_id"], goal=meta["goal"], workspace=workspace, run_dir=run_dir, shadow=shadow)
    try:
        context = hooks.before_run(info) or MemoryContext()
        if shadow:
            meta = {**meta, "work": str(make_shadow_copy(workspace, run_dir, limits))}
        save_start(run_dir, work_folder(meta), limits, home=None if shadow else run_dir.parent.parent)
    except BaseException as e:
        reason = why(e)
        save_meta(
            run_dir,
            {
                **meta,
                "status": "interrupted",
                "reason": f"stopped while preparing ({reason}); continue with `tether resume {meta['run_id']}`",
            },
        )
        raise
    meta = {k: v for k, v in meta.items() if k != "phase"} | {
        "memory_context": context.text,
        "lesson_ids": context.lesson_ids,
    }
    save_meta(run_dir, meta)
    return meta


def not_started(meta: dict[str, Any], run_dir: Path, reason: str) -> RunRecord:
    """An interrupted run that never reached its graph (run.json says so)."""
    save_meta(run_dir, {**meta, "status": "interrupted", "reason": reason})
    return RunRecord(run_id=meta["run_id"], goal=meta["goal"], workspace=Path(meta["workspace"]), run_dir=run_dir,
                     status="interrupted", reason=reason, shadow=bool(meta.get("shadow")))


def why(e: BaseException) -> str:
    """A non-empty one-line reason for an exception (KeyboardInterrupt's own text is empty)."""
    if isinstance(e, KeyboardInterrupt):
        return "interrupted by Ctrl-C (SIGINT)"
    if isinstance(e, SystemExit):
        code = e.code if isinstance(e.code, int) else 0
        return (
            f"stopped by {signal.Signals(code - 128).name}"
            if 128 < code < 128 + signal.NSIG
            else f"stopped (exit {e.code})"
        )
    text = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return text or type(e).__name__


def attempt(journal: Journal) -> int:
    return sum(isinstance(e, RunStarted) for e in journal.events)


def end(journal: Journal, record: RunRecord) -> None:
    """Journal the end of this attempt, unless it is already there (a finished run reported again)."""
    last = next((e for e in reversed(journal.events) if isinstance(e, RunStarted | RunEnded)), None)
    if not isinstance(last, RunEnded):
        journal.append(RunEnded(key=f"run_end:{attempt(journal)}", status=record.status, reason=record.reason))
    journal.close()


def after_run(record: RunRecord, hooks: RunHooks, model: Callable[[], BaseChatModel]) -> RunRecord:
    """Memory and trust effects of a finished run, applied at most once (run.files.AfterRun).

    `model` gives the run's own chat model (built only when an effect still needs it).
    """
    if record.status == "interrupted":
        return record
    ledger = AfterRun(record.run_dir)
    if ledger.has("after_run"):
        return record.model_copy(update={"memory": ledger.get("after_run") or {}})
    try:
        extras = hooks.after_run(record, model()) or {}
    except (KeyboardInterrupt, SystemExit) as e:
        log.warning("after-run phase of run %s stopped: %s", record.run_id, why(e))
        return record.model_copy(
            update={"memory": {"memory_error": f"{why(e)}; `tether resume {record.run_id}` finishes it"}}
        )
    except Exception as e:  # the run's outcome stands; the failure is reported, not raised
        log.exception("after-run hooks failed for run %s", record.run_id)
        extras = {"memory_error": f"{type(e).__name__}: {e}"}
    if "memory_error" not in extras:  # a failed phase is tried again by `tether resume`
        try:
            ledger.mark("after_run", extras)
        except StateFileError as e:
            log.warning("%s", e)
    return record.model_copy(update={"memory": extras})


def start_manifest(run_dir: Path) -> dict[str, FileState]:
    """The workspace manifest taken before the run; one line naming the file when it is unusable."""
    try:
        return load_start(run_dir)
    except (OSError, ValueError, AttributeError) as e:
        path = run_dir / START_MANIFEST
        msg = (
            f"{path} is missing or corrupt ({why(e)}); the gate cannot compare the workspace with its start; start "
            "the goal again with `tether run`"
        )
        raise StateFileError(msg) from e
