"""The hooks a CLI run gets: trust always, memory unless disabled, in one object."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel

from tether.guardian.verdict import Verdict
from tether.runtime.config import TetherConfig
from tether.runtime.hooks.base import MemoryContext, RunHooks, RunInfo, RunRecord


class ChainedHooks:
    """Calls each hook in order; an ask is auto-approved when a hook (trust) allows it."""

    def __init__(self, *hooks: RunHooks) -> None:
        self.hooks = hooks

    def before_run(self, run: RunInfo) -> MemoryContext:
        """Each hook's, at the same time (recall beside the trust snapshot: neither needs the other); joined in
        order, the first failure raised once all have ended."""
        text: list[str] = []
        ids: list[str] = []
        if len(self.hooks) > 1:
            with ThreadPoolExecutor(max_workers=len(self.hooks), thread_name_prefix="tether-before-run") as pool:
                started = [pool.submit(h.before_run, run) for h in self.hooks]
                wait(started)
                contexts = [f.result() for f in started]
        else:
            contexts = [h.before_run(run) for h in self.hooks]
        for ctx in contexts:
            text += [ctx.text] if ctx.text else []
            ids += ctx.lesson_ids
        return MemoryContext(text="\n\n".join(text), lesson_ids=ids)

    def after_run(self, record: RunRecord, model: BaseChatModel) -> dict[str, Any]:
        extras: dict[str, Any] = {}
        for h in self.hooks:
            extras |= h.after_run(record, model) or {}
        return extras

    def decide_ask(self, verdict: Verdict, run_id: str) -> Literal["allow", "ask"]:
        return "allow" if any(h.decide_ask(verdict, run_id) == "allow" for h in self.hooks) else "ask"

    def record_approval(self, verdict: Verdict, approved: bool, run_id: str) -> None:
        for h in self.hooks:
            h.record_approval(verdict, approved, run_id)

    def shadow_record(self, verdict: Verdict, command: str, person: bool | None, run_id: str) -> None:
        for h in self.hooks:
            h.shadow_record(verdict, command, person, run_id)

    def trust_kinds(self, verdict: Verdict) -> list[str]:
        from tether.runtime.trust.kinds import verdict_kinds

        return verdict_kinds(verdict)


def build_hooks(config: TetherConfig, *, memory: bool = True) -> RunHooks:
    """Trust hooks, plus memory hooks when enabled in config and not turned off for this run."""
    from tether.runtime.hooks.trust import TrustHooks

    hooks: list[RunHooks] = [TrustHooks(config)]
    if memory and config.memory.enabled:
        from tether.runtime.hooks.memory import MemoryHooks

        hooks.append(MemoryHooks(config))
    return ChainedHooks(*hooks)
