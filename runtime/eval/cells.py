"""One cell of an eval: one task, one method, one trial, run once and kept.

Parts: `Method`, `Cell`, `CellResult`, `EvalContext` (what every cell
shares), `CallCounter` (model calls and tokens, from the provider's usage or
the scripted model's estimate), `run_cell`.

A cell lives in `OUT/cells/<task>/<method>-<trial>/`: its own Tether home
(runs, checkpoints, and for memory methods a copy of the memory it starts
from), its workspace, the verifier's log, and `result.json`, written
atomically last. A cell with a result that is `done` or `skipped` is never
run again, which is how an interrupted eval resumes; any other cell starts
over from a clean folder.
"""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path
from typing import Any, Literal

from langchain_core.callbacks import BaseCallbackHandler
from pydantic import BaseModel, ConfigDict

from tether.common.atomic import write_atomic
from tether.common.errors import TetherError
from tether.common.sparse_copy import copy_sparse
from tether.runtime.config import TetherConfig
from tether.runtime.eval.sandbox import prepare_workspace, verify
from tether.runtime.eval.tasks import Task, scenario_for

Method = Literal["no-memory", "rerun", "memory", "lessons-only", "train"]
MEMORY_METHODS = ("memory", "lessons-only", "train")
SCRIPTED_PER_TASK = "scripted:task"
"""`--model scripted:task`: each task's own scripted/<method>.yaml."""
RESULT = "result.json"
log = logging.getLogger(__name__)


class Cell(BaseModel):
    """What to run."""

    task: Task
    method: Method
    trial: int
    memory_from: list[Path] = []
    """Memory folders this cell may start from, latest first; the first that exists is copied
    (a skipped or failed cell of the chain left none). None exists: an empty memory."""

    @property
    def name(self) -> str:
        return f"{self.task.name}/{self.method}-{self.trial}"


class CellResult(BaseModel):
    """What one cell did; `passed` is None when the task was skipped or the cell failed to run."""

    model_config = ConfigDict(extra="forbid")

    task: str
    split: str
    method: Method
    trial: int
    status: Literal["done", "skipped", "error"]
    passed: bool | None = None
    reason: str = ""
    run_id: str = ""
    run_status: str = ""
    model_calls: int = 0
    tokens: int = 0
    memory_calls: int = 0
    memory_tokens: int = 0
    wall_s: float = 0.0


class EvalContext(BaseModel):
    """What every cell of one eval shares."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    config: TetherConfig
    model_spec: str
    out: Path
    project: str
    images: dict[str, tuple[str | None, str]]
    """Task name -> (image, skip reason)."""
    test_timeout_s: float = 600.0

    def cell_dir(self, cell: Cell) -> Path:
        return self.out / "cells" / cell.task.name / f"{cell.method}-{cell.trial}"

    def memory_dir(self, cell: Cell) -> Path:
        """Where the cell's memory ends up (what a later cell of the same chain starts from)."""
        return self.cell_dir(cell) / "home" / "memory"


class CallCounter(BaseCallbackHandler):
    """Counts chat model calls and their tokens (usage metadata, else a 4-characters-a-token estimate)."""

    def __init__(self) -> None:
        self.calls = 0
        self.tokens = 0

    def on_llm_end(self, response: Any, **kwargs: Any) -> None:  # noqa: ARG002
        self.calls += 1
        for gens in response.generations:
            for g in gens:
                usage = getattr(getattr(g, "message", None), "usage_metadata", None) or {}
                total = usage.get("total_tokens") or usage.get("input_tokens", 0) + usage.get("output_tokens", 0)
                self.tokens += int(total or len(getattr(g, "text", "") or "") // 4)


def load_result(ctx: EvalContext, cell: Cell) -> CellResult | None:
    path = ctx.cell_dir(cell) / RESULT
    if not path.is_file():
        return None
    try:
        result = CellResult.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError:
        return None  # torn or foreign: the cell runs again
    return result if result.status in ("done", "skipped") else None


def _spec(ctx: EvalContext, cell: Cell) -> str:
    if ctx.model_spec != SCRIPTED_PER_TASK:
        return ctx.model_spec
    method = "memory" if cell.method == "train" else cell.method
    return f"scripted:{scenario_for(cell.task, method, cell.trial)}"


def _configs(ctx: EvalContext, cell: Cell, home: Path, image: str) -> tuple[TetherConfig, TetherConfig]:
    """(the runner's config, the memory hooks' config): lessons-only reads memory but never mounts it."""
    base = ctx.config
    task = cell.task.settings
    sandbox: dict[str, Any] = {"image": image}
    if task.cpus is not None:
        sandbox["cpus"] = task.cpus
    if task.memory_mb is not None:
        sandbox["memory"] = f"{task.memory_mb}m"
    hooks_cfg = base.model_copy(update={
        "home": home,
        "sandbox": base.sandbox.model_copy(update=sandbox),
        "run": base.run.model_copy(update={"max_seconds": task.agent_timeout_s}) if task.agent_timeout_s
        else base.run,
        "memory": base.memory.model_copy(update={"enabled": cell.method in MEMORY_METHODS}),
    })
    if cell.method != "lessons-only":
        return hooks_cfg, hooks_cfg
    return hooks_cfg.model_copy(update={"memory": hooks_cfg.memory.model_copy(update={"enabled": False})}), hooks_cfg


def _hooks(cell: Cell, cfg: TetherConfig, project: str) -> Any:
    from tether.runtime.hooks.base import NoHooks
    from tether.runtime.hooks.memory import MemoryHooks

    if cell.method in ("no-memory", "rerun"):
        return NoHooks()
    if cell.method == "lessons-only":
        return MemoryHooks(cfg, project=project, sources=False, learn=False)
    return MemoryHooks(cfg, project=project)


def run_cell(ctx: EvalContext, cell: Cell) -> CellResult:
    """Run the cell unless its result is kept; always leaves a result.json."""
    kept = load_result(ctx, cell)
    if kept is not None:
        return kept
    folder = ctx.cell_dir(cell)
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    base = {"task": cell.task.name, "split": cell.task.split, "method": cell.method, "trial": cell.trial}
    image, why = ctx.images[cell.task.name]
    if image is None:
        result = CellResult(**base, status="skipped", reason=why)
    else:
        result = _run(ctx, cell, folder, image, base)
    write_atomic(folder / RESULT, result.model_dump_json(indent=2))
    return result


def _run(ctx: EvalContext, cell: Cell, folder: Path, image: str, base: dict[str, Any]) -> CellResult:
    from tether.runtime.models.registry import build_chat_model
    from tether.runtime.run.runner import RunOptions, start_run

    start = time.monotonic()
    counter = CallCounter()
    try:
        home, workspace = folder / "home", folder / "workspace"
        prepare_workspace(cell.task, workspace)
        source = next((p for p in cell.memory_from if p.is_dir()), None)
        if cell.method in MEMORY_METHODS and source is not None:
            # the index is mostly holes: copy what it holds, not its size (a reflink where the disk can)
            shutil.copytree(source, home / "memory", ignore=shutil.ignore_patterns(".lock"), copy_function=copy_sparse)
        run_cfg, hooks_cfg = _configs(ctx, cell, home, image)
        spec = _spec(ctx, cell)
        chat = build_chat_model(run_cfg.model.model_copy(update={"spec": spec}))
        chat.callbacks = [counter]
        options = RunOptions(goal=cell.task.instruction, workspace=workspace, model_spec=spec,
                             memory=cell.method in ("memory", "train"))
        record = start_run(run_cfg, options, hooks=_hooks(cell, hooks_cfg, ctx.project), model=chat)
        memory = record.memory or {}
        passed, why = (None, "training run: not verified") if cell.method == "train" else \
            verify(cell.task, workspace, run_cfg.sandbox, folder, record.run_id,
                   cell.task.settings.verifier_timeout_s or ctx.test_timeout_s)
        return CellResult(
            **base,
            status="done",
            passed=passed,
            reason=why,
            run_id=record.run_id,
            run_status=record.status,
            model_calls=counter.calls,
            tokens=counter.tokens,
            memory_calls=int(memory.get("memory_calls", 0)),
            memory_tokens=int(memory.get("memory_tokens", 0)),
            wall_s=round(time.monotonic() - start, 3),
        )
    except Exception as e:  # one cell's crash is that cell's error (listed, retried next time), not the eval's
        if not isinstance(e, TetherError | OSError):
            log.exception("eval cell %s crashed", cell.name)
        return CellResult(**base, status="error", reason=f"{type(e).__name__}: {e}"[:500],
                          model_calls=counter.calls, tokens=counter.tokens, wall_s=round(time.monotonic() - start, 3))
