"""Step execution nodes: schedule, act, guard, approve, execute.

Parts: `execution_nodes(deps)` returns the node functions. One actor turn
flows act -> guard -> (approve)* -> execute: `act` calls the model, `guard`
consults the guardian, `approve` pauses with `interrupt()` (nothing happens
before it), `execute` runs the commands. Every superstep is a checkpoint,
so where no interrupt sits between them the work shares a node: `guard`
runs the execute logic itself when no ask waits for a decision, and an
execute that settles the step schedules the next one (what `schedule` does
after a plan or a repair). The model call keeps its own checkpoint, so a
re-run never asks the model again after a command was judged.

Nodes are idempotent when re-run after a crash: a command's result is
journaled under its stable id `step/turn/index` and reused, and a verdict
(and approval) already journaled for a command stands, since the command
may have run on it.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.types import interrupt
from tether.common.events import (
    ApprovalRecorded,
    CommandProposed,
    ExecFinished,
    ExecStarted,
    VerdictRecorded,
)
from tether.graphs.common import call_model, fail_step, over_budget, plan_steps, set_status
from tether.graphs.dag import ready
from tether.graphs.prompts import ACTOR_TOOLS, actor_messages
from tether.graphs.state import Call, Deps, RunState, Step
from tether.guardian.verdict import CheckContext, RuleHit, Verdict

Node = Callable[[RunState], dict[str, Any]]
SHELL_TOOLS = ("run_shell", "read_file")
log = logging.getLogger(__name__)


def cap(text: str, limit: int) -> str:
    """Head and tail of `text` within `limit` characters."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit} characters dropped ...]\n{text[-half:]}"


def undecided(state: RunState) -> bool:
    """An ask in the current turn still waits for a decision."""
    return any(c.get("enforced") == "ask" and c.get("approval", "none") == "none" for c in state.get("pending", []))


def execution_nodes(deps: Deps) -> dict[str, Node]:
    mount = deps.workspace_mount

    def schedule(state: RunState) -> dict[str, Any]:
        """Pick the next ready step (topological order), or stop on a spent budget."""
        steps = state.get("steps", {})
        why = over_budget(state, deps)
        if why:
            skipped = {sid: set_status(deps, state, s, "skipped", why) for sid, s in steps.items() if s["status"] in ("pending", "running")}
            return {"current": "", "stop_reason": why, "steps": skipped}
        nxt = ready(plan_steps(state), {sid: s["status"] for sid, s in steps.items()})
        if not nxt:
            return {"current": ""}
        sid = nxt[0]
        return {"current": sid, "pending": [], "messages": [], "steps": {sid: set_status(deps, state, steps[sid], "running")}}

    def act(state: RunState) -> dict[str, Any]:
        """One actor turn (site `actor`, key = step id, turn = turns taken in the step)."""
        sid = state["current"]
        step = state["steps"][sid]
        turn = step.get("turns", 0)
        why = over_budget(state, deps)
        if why or turn >= deps.max_commands_per_step:
            return {"steps": fail_step(deps, state, step, why or f"exceeded max_commands_per_step ({deps.max_commands_per_step})")}
        messages = state.get("messages") or []
        if not messages:
            plan = {p["id"]: p for p in state.get("plan", [])}
            done = [{"id": d, **state["steps"].get(d, {})} for d in plan[sid].get("depends_on", [])]
            messages = actor_messages(state["goal"], plan[sid], done, state.get("memory_context", ""), mount)
        ai, tokens = call_model(deps, messages, ACTOR_TOOLS, "actor", sid, turn)
        calls: list[Call] = []
        for i, tc in enumerate(ai.tool_calls):
            call: Call = {"call_id": tc.get("id") or f"{sid}-{turn}-{i}", "cmd_id": f"{sid}/{turn}/{i}", "name": tc["name"], "args": dict(tc["args"]), "approval": "none"}
            calls.append(call)
        update: dict[str, Any] = {"messages": [*messages, ai], "pending": calls, "tokens": tokens}
        if not calls:
            update["steps"] = fail_step(deps, state, step, f"actor gave up: {str(ai.content)[:300]}")
        return update

    def guard(state: RunState) -> dict[str, Any]:
        """Journal each proposed command and the guardian's verdict; decide what is enforced.

        With nothing left to approve, the turn is executed in this node too (one
        checkpoint less per turn); an ask stops here, so `approve` interrupts
        before anything runs.
        """
        out: list[Call] = []
        for c in state.get("pending", []):
            c = dict(c)  # type: ignore[assignment]
            if c["name"] in SHELL_TOOLS and "decision" not in c:
                _judge(deps, state, c, state["current"])
            out.append(c)
        after: RunState = {**state, "pending": out}  # type: ignore[typeddict-item]
        return {"pending": out} if undecided(after) else execute(after)

    def approve(state: RunState) -> dict[str, Any]:
        """Settle the first undecided ask: --yes, no person (refuse), or pause for a person."""
        pending = [dict(c) for c in state.get("pending", [])]
        for c in pending:
            if c.get("enforced") != "ask" or c.get("approval", "none") != "none":
                continue
            if deps.approval == "yes":
                approved, by = True, "yes-flag"
            elif deps.approval == "refuse":
                approved, by = False, "no-person"
            else:
                answer = interrupt({"run_id": state.get("run_id"), "cmd_id": c["cmd_id"], "command": c["command"], "reason": c.get("reason", "")})
                approved, by = bool(answer.get("approved") if isinstance(answer, dict) else answer), "person"
            c["approval"] = "approved" if approved else "refused"
            new = deps.journal.append(ApprovalRecorded(key=f"approval:{c['cmd_id']}", cmd_id=c["cmd_id"], approved=approved, by=by))
            if new and (by == "person" or c.get("shadow")):
                verdict = Verdict.model_validate(c["verdict"])
                if by == "person":
                    deps.record_approval(verdict, approved)
                if c.get("shadow"):  # every shadow ask is audited; only a person's answer counts as one
                    deps.shadow_record(verdict, c["command"], approved if by == "person" else None)
            break
        return {"pending": pending}

    def execute(state: RunState) -> dict[str, Any]:
        """Run allowed commands (reusing journaled results), answer every call, settle the step."""
        sid = state["current"]
        step = state["steps"][sid]
        messages = list(state.get("messages") or [])
        commands = list(step.get("commands", []))
        finish: dict[str, Any] | None = None
        for c in state.get("pending", []):
            name = c["name"]
            if name == "finish_step":
                finish = c["args"]
                observation = "step finished"
            elif name not in SHELL_TOOLS:
                observation = f"unknown tool '{name}'; use run_shell, read_file or finish_step"
            elif c.get("error"):
                observation = c["error"]
            else:
                commands.append(c["cmd_id"])
                observation = _observe(deps, c)
            messages.append(ToolMessage(content=observation, tool_call_id=c["call_id"], name=name))
        turns = step.get("turns", 0) + 1
        current: Step = {**step, "turns": turns, "commands": commands}
        update: dict[str, Any] = {"messages": messages, "pending": []}
        if finish is not None:
            current = set_status(
                deps, state, current, "done", "",
                summary=str(finish.get("summary", "")), evidence=str(finish.get("evidence", "")),
                files_read=[str(f) for f in finish.get("files_read") or []],
                files_changed=[str(f) for f in finish.get("files_changed") or []],
            )
            update["steps"] = {sid: current}
        elif turns >= deps.max_commands_per_step:
            update["steps"] = fail_step(deps, state, current, f"exceeded max_commands_per_step ({deps.max_commands_per_step})")
        else:
            return {**update, "steps": {sid: current}}
        # The step is settled: schedule the next one in this node (one checkpoint less per step;
        # no interrupt or side effect sits between the two, and both are idempotent on a re-run).
        after: RunState = {**state, **update, "steps": {**state.get("steps", {}), **update["steps"]}}  # type: ignore[typeddict-item]
        nxt = schedule(after)
        return {**update, **nxt, "steps": {**update["steps"], **nxt.get("steps", {})}}

    return {"schedule": schedule, "act": act, "guard": guard, "approve": approve, "execute": execute}


def _judge(deps: Deps, state: RunState, c: dict[str, Any], sid: str) -> None:
    """Fill in a call's command, verdict and enforced decision (fail closed)."""
    args = c.get("args", {})
    if c["name"] == "run_shell":
        command = args.get("command")
    else:
        command = f"cat -- {shlex.quote(str(args['path']))}" if args.get("path") else None
    if not isinstance(command, str) or not command.strip():
        c.update(decision="deny", enforced="deny", error=f"{c['name']} needs a non-empty '{'command' if c['name'] == 'run_shell' else 'path'}' argument")
        return
    c["command"] = command
    deps.journal.append(CommandProposed(key=f"cmd:{c['cmd_id']}", cmd_id=c["cmd_id"], step=sid, tool=c["name"], command=command, cwd=deps.workspace_mount))
    try:
        verdict = deps.guard(command, CheckContext(workspace=Path(deps.workspace_mount)))
    except Exception as e:  # the guardian fails closed: any failure is a deny
        verdict = Verdict(decision="deny", hits=[RuleHit(id="GUARD-FAIL", category="guardian-failure", decision="deny", reason=str(e))], reason=f"guardian failed: {e}")
    prior = deps.journal.get(f"verdict:{c['cmd_id']}")
    if isinstance(prior, VerdictRecorded):
        # A re-run after a crash: this command was judged (and its hooks called) before,
        # and may have run on that verdict; the journal stands even if config or trust changed.
        if prior.decision != verdict.decision:
            verdict = Verdict(decision=prior.decision, hits=[h for h in verdict.hits if h.id in prior.rules], reason=prior.reason)
        approval = deps.journal.get(f"approval:{c['cmd_id']}")
        if isinstance(approval, ApprovalRecorded):
            c["approval"] = "approved" if approval.approved else "refused"
        if state.get("shadow"):
            c["shadow"] = True
        c.update(decision=prior.decision, enforced=prior.enforced, reason=prior.reason, verdict=verdict.model_dump(mode="json"))
        return
    enforced = verdict.decision
    if state.get("shadow"):
        # Shadow audit: the guardian does not block; a person present still answers asks
        # (their answer is honoured and compared with what trust would have done).
        c["shadow"] = True
        enforced = "ask" if verdict.decision == "ask" and deps.approval == "prompt" else "allow"
        if enforced == "allow":
            deps.shadow_record(verdict, command, None)
    elif enforced == "ask" and _trusted(deps, verdict):
        enforced = "allow"
        c["approval"] = "approved"
        deps.journal.append(ApprovalRecorded(key=f"approval:{c['cmd_id']}", cmd_id=c["cmd_id"], approved=True, by="trust"))
    c.update(decision=verdict.decision, enforced=enforced, reason=verdict.reason, verdict=verdict.model_dump(mode="json"))
    deps.journal.append(VerdictRecorded(
        key=f"verdict:{c['cmd_id']}", cmd_id=c["cmd_id"], decision=verdict.decision, enforced=enforced,
        rules=verdict.rules, kinds=verdict.kinds, categories=sorted({h.category for h in verdict.hits}), reason=verdict.reason,
    ))


def _trusted(deps: Deps, verdict: Verdict) -> bool:
    """Whether trust auto-approves this ask; a failing trust lookup fails closed (a person decides)."""
    try:
        return deps.decide_ask(verdict) == "allow"
    except Exception:
        log.exception("trust decision failed; the ask goes to a person")
        return False


def _observe(deps: Deps, c: Call) -> str:
    """What the model sees for one command: the verdict's refusal, or exit code and output."""
    if c.get("enforced") == "deny":
        rules = ", ".join(h["id"] for h in c.get("verdict", {}).get("hits", []))
        return f"DENIED by the guardian ({rules}): {c.get('reason', '')}. Do not retry it in another form."
    if c.get("enforced") == "ask" and c.get("approval") != "approved":
        return f"REFUSED: the guardian asks for approval ({c.get('reason', '')}) and it was not given. Choose another way."
    result = _run_once(deps, c)
    note = " (timed out)" if result.timed_out else ""
    return f"exit code {result.exit_code}{note}\n{cap(result.output, deps.output_cap)}"


def _run_once(deps: Deps, c: Call) -> ExecFinished:
    """Execute a command at most once per journal: a journaled result is reused on resume."""
    done = deps.journal.result(c["cmd_id"])
    if done is not None:
        return done
    deps.journal.append(ExecStarted(key=f"exec_start:{c['cmd_id']}", cmd_id=c["cmd_id"]))
    before = deps.snapshot() if deps.snapshot else None
    stray = deps.stray(before) if deps.stray and before is not None else []
    res = deps.sandbox.exec(c["command"], cwd=deps.workspace_mount)
    after = deps.snapshot() if deps.snapshot else None
    changed = deps.changed(before, after) if deps.changed and after is not None else []
    exit_code, output = res.exit_code, cap(res.output, 16_000)
    over = deps.over_limit(after) if deps.over_limit and after is not None else None
    if over:  # the command succeeded at filling the workspace: it fails, and the model is told why
        exit_code, output = exit_code or 1, f"{output}\nTETHER: {over}"
    event = ExecFinished(
        key=f"exec:{c['cmd_id']}", cmd_id=c["cmd_id"], exit_code=exit_code, output=output,
        duration_s=res.duration_s, timed_out=res.timed_out, changed=changed, stray=stray, secrets=list(res.secrets),
    )
    deps.journal.append(event)
    return event
