"""Step execution nodes: schedule, act, guard, approve, execute.

Each node is a plain function of the state and LangGraph's runtime, whose
`context` is the run's `RunContext`; the edges in graphs.build route between
them (no node calls another). One actor turn flows act -> guard ->
(approve)* -> execute: `act` calls the model, `guard` consults the guardian,
`approve` pauses with `interrupt()` (nothing happens before it), `execute`
runs the commands. Every node ends in a checkpoint, so a re-run never asks
the model again after a command was judged.

Nodes are idempotent when re-run after a crash: a command's result is
journaled under its stable id `step/turn/index` and reused, and a verdict
(and approval) already journaled for a command stands, since the command
may have run on it.
"""

from __future__ import annotations

import logging
import shlex
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from tether.common.events import (
    ApprovalRecorded,
    CommandProposed,
    ExecFinished,
    ExecStarted,
    VerdictRecorded,
)
from tether.graphs.common import call_model, fail_step, over_budget, plan_steps, problem_of, set_status
from tether.graphs.context import RunContext
from tether.graphs.dag import ready
from tether.graphs.network import network_verdict, run_granted
from tether.graphs.prompts import ACTOR_TOOLS, actor_messages
from tether.graphs.state import Call, RunState, Step
from tether.guardian.verdict import RuleHit, Verdict

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


def schedule(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Pick the next ready step (topological order), or stop on a spent budget."""
    ctx = runtime.context
    steps = state.get("steps", {})
    why = over_budget(state, ctx.budgets)
    if why:
        skipped = {sid: set_status(ctx, state, s, "skipped", why) for sid, s in steps.items()
                   if s["status"] in ("pending", "running")}
        return {"current": "", "stop_reason": why, "steps": skipped}
    nxt = ready(plan_steps(state), {sid: s["status"] for sid, s in steps.items()})
    if not nxt:
        return {"current": ""}
    sid = nxt[0]
    return {
        "current": sid,
        "pending": [],
        "messages": [],
        "steps": {sid: set_status(ctx, state, steps[sid], "running")},
    }


def act(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """One actor turn (site `actor`, key = step id, turn = turns taken in the step)."""
    ctx = runtime.context
    sid = state["current"]
    step = state["steps"][sid]
    turn = step.get("turns", 0)
    why = over_budget(state, ctx.budgets)
    limit = ctx.budgets.max_commands_per_step
    if why or turn >= limit:
        return {"steps": fail_step(ctx, state, step, why or f"exceeded max_commands_per_step ({limit})")}
    messages = state.get("messages") or []
    if not messages:
        plan = {p["id"]: p for p in state.get("plan", [])}
        done = [{"id": d, **state["steps"].get(d, {})} for d in plan[sid].get("depends_on", [])]
        messages = actor_messages(state["goal"], plan[sid], done, state.get("memory_context", ""), ctx.workspace_mount)
    ai, tokens = call_model(ctx, messages, ACTOR_TOOLS, "actor", sid, turn)
    calls: list[Call] = []
    for i, tc in enumerate(ai.tool_calls):
        call: Call = {"call_id": tc.get("id") or f"{sid}-{turn}-{i}", "cmd_id": f"{sid}/{turn}/{i}", "name": tc["name"],
                      "args": dict(tc["args"]), "approval": "none"}
        calls.append(call)
    update: dict[str, Any] = {"messages": [*messages, ai], "pending": calls, "tokens": tokens}
    if not calls:
        why = problem_of(ai)
        update["steps"] = fail_step(ctx, state, step, f"the actor's answer was not usable: {why}" if why
                                    else f"actor gave up: {str(ai.content)[:300]}")
    return update


def guard(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Journal each proposed command and the guardian's verdict; decide what is enforced."""
    out: list[Call] = []
    for c in state.get("pending", []):
        c = dict(c)  # type: ignore[assignment]
        if c["name"] in SHELL_TOOLS and "decision" not in c:
            _judge(runtime.context, state, c, state["current"])
        out.append(c)
    return {"pending": out}


def approve(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Settle the first undecided ask: --yes, no person (refuse), or pause for a person."""
    ctx = runtime.context
    pending = [dict(c) for c in state.get("pending", [])]
    for c in pending:
        if c.get("enforced") != "ask" or c.get("approval", "none") != "none":
            continue
        if ctx.approval == "yes":
            approved, by = True, "yes-flag"
        elif ctx.approval == "refuse":
            approved, by = False, "no-person"
        else:
            answer = interrupt({"run_id": state.get("run_id"), "cmd_id": c["cmd_id"], "command": c["command"],
                                "reason": c.get("reason", "")})
            approved, by = bool(answer.get("approved") if isinstance(answer, dict) else answer), "person"
        c["approval"] = "approved" if approved else "refused"
        c["approved_by"] = by
        new = ctx.journal.append(ApprovalRecorded(key=f"approval:{c['cmd_id']}", cmd_id=c["cmd_id"],
                                                  approved=approved, by=by))
        if new and (by == "person" or c.get("shadow")):
            verdict = Verdict.model_validate(c["verdict"])
            if by == "person":
                ctx.approvals.record_approval(verdict, approved, ctx.run_id)
            if c.get("shadow"):  # every shadow ask is audited; only a person's answer counts as one
                ctx.approvals.shadow_record(verdict, c["command"], approved if by == "person" else None, ctx.run_id)
        break
    return {"pending": pending}


def execute(state: RunState, runtime: Runtime[RunContext]) -> dict[str, Any]:
    """Run allowed commands (reusing journaled results), answer every call, settle the step."""
    ctx = runtime.context
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
            observation = _observe(ctx, c)
        messages.append(ToolMessage(content=observation, tool_call_id=c["call_id"], name=name))
    turns = step.get("turns", 0) + 1
    current: Step = {**step, "turns": turns, "commands": commands}
    update: dict[str, Any] = {"messages": messages, "pending": []}
    limit = ctx.budgets.max_commands_per_step
    if finish is not None:
        current = set_status(
            ctx, state, current, "done", "",
            summary=str(finish.get("summary", "")), evidence=str(finish.get("evidence", "")),
            files_read=[str(f) for f in finish.get("files_read") or []],
            files_changed=[str(f) for f in finish.get("files_changed") or []],
        )
        update["steps"] = {sid: current}
    elif turns >= limit:
        update["steps"] = fail_step(ctx, state, current, f"exceeded max_commands_per_step ({limit})")
    else:
        update["steps"] = {sid: current}
    return update


def _judge(ctx: RunContext, state: RunState, c: dict[str, Any], sid: str) -> None:
    """Fill in a call's command, verdict and enforced decision (fail closed)."""
    args = c.get("args", {})
    if c["name"] == "run_shell":
        command = args.get("command")
    else:
        command = f"cat -- {shlex.quote(str(args['path']))}" if args.get("path") else None
    if not isinstance(command, str) or not command.strip():
        c.update(
            decision="deny",
            enforced="deny",
            error=f"{c['name']} needs a non-empty '{'command' if c['name'] == 'run_shell' else 'path'}' argument",
        )
        return
    c["command"] = command
    ctx.journal.append(CommandProposed(key=f"cmd:{c['cmd_id']}", cmd_id=c["cmd_id"], step=sid, tool=c["name"],
                                       command=command, cwd=ctx.workspace_mount))
    try:
        verdict = ctx.judge(command)
    except Exception as e:  # the guardian fails closed: any failure is a deny
        verdict = Verdict(
            decision="deny",
            hits=[RuleHit(id="GUARD-FAIL", category="guardian-failure", decision="deny", reason=str(e))],
            reason=f"guardian failed: {e}",
        )
    if ctx.network is not None and verdict.decision != "deny":
        verdict, hosts = network_verdict(ctx.network, command, verdict)
        if hosts is not None:
            c["network"] = hosts
    prior = ctx.journal.get(f"verdict:{c['cmd_id']}")
    if isinstance(prior, VerdictRecorded):
        # A re-run after a crash: this command was judged (and its hooks called) before,
        # and may have run on that verdict; the journal stands even if config or trust changed.
        if prior.decision != verdict.decision:
            verdict = Verdict(
                decision=prior.decision, hits=[h for h in verdict.hits if h.id in prior.rules], reason=prior.reason
            )
        approval = ctx.journal.get(f"approval:{c['cmd_id']}")
        if isinstance(approval, ApprovalRecorded):
            c["approval"] = "approved" if approval.approved else "refused"
        if state.get("shadow"):
            c["shadow"] = True
        c.update(
            decision=prior.decision,
            enforced=prior.enforced,
            reason=prior.reason,
            verdict=verdict.model_dump(mode="json"),
        )
        return
    enforced = verdict.decision
    if state.get("shadow"):
        # Shadow audit: the guardian does not block; a person present still answers asks
        # (their answer is honoured and compared with what trust would have done).
        c["shadow"] = True
        enforced = "ask" if verdict.decision == "ask" and ctx.approval == "prompt" else "allow"
        if enforced == "allow":
            ctx.approvals.shadow_record(verdict, command, None, ctx.run_id)
    elif enforced == "ask" and _trusted(ctx, verdict):
        enforced = "allow"
        c["approval"] = "approved"
        ctx.journal.append(
            ApprovalRecorded(key=f"approval:{c['cmd_id']}", cmd_id=c["cmd_id"], approved=True, by="trust")
        )
    c.update(
        decision=verdict.decision, enforced=enforced, reason=verdict.reason, verdict=verdict.model_dump(mode="json")
    )
    ctx.journal.append(
        VerdictRecorded(
            key=f"verdict:{c['cmd_id']}",
            cmd_id=c["cmd_id"],
            decision=verdict.decision,
            enforced=enforced,
            rules=verdict.rules,
            kinds=_kinds(ctx, verdict),
            categories=sorted({h.category for h in verdict.hits}),
            reason=verdict.reason,
        )
    )


def _kinds(ctx: RunContext, verdict: Verdict) -> list[str]:
    """The trust ledger's kinds (rule and shape) for the journal, so rollback demotes what the ledger counted."""
    try:
        return ctx.approvals.trust_kinds(verdict)
    except Exception:  # a seam without it (an older hooks object): the guardian's coarser kinds
        return verdict.kinds


def _trusted(ctx: RunContext, verdict: Verdict) -> bool:
    """Whether trust auto-approves this ask; a failing trust lookup fails closed (a person decides)."""
    try:
        return ctx.approvals.decide_ask(verdict, ctx.run_id) == "allow"
    except Exception:
        log.exception("trust decision failed; the ask goes to a person")
        return False


def _observe(ctx: RunContext, c: Call) -> str:
    """What the model sees for one command: the verdict's refusal, or exit code and output."""
    if c.get("enforced") == "deny":
        rules = ", ".join(h["id"] for h in c.get("verdict", {}).get("hits", []))
        return f"DENIED by the guardian ({rules}): {c.get('reason', '')}. Do not retry it in another form."
    if c.get("enforced") == "ask" and c.get("approval") != "approved":
        nobody = " (nobody was there to answer: the run has no terminal, --yes or --ask-later)" \
            if c.get("approved_by") == "no-person" else ""
        return (f"REFUSED: the guardian asks for approval ({c.get('reason', '')}) and it was not given{nobody}. "
                "Choose another way.")
    result = _run_once(ctx, c)
    note = " (timed out)" if result.timed_out else ""
    return f"exit code {result.exit_code}{note}\n{cap(result.output, ctx.output_cap)}"


UNKNOWN_EXIT = 125
UNKNOWN_RESULT = ("TETHER: this command was started before the run was interrupted and its result was lost. "
                  "It was not run again, so its effect may or may not have happened: check the workspace "
                  "before repeating it.")


def _run_once(ctx: RunContext, c: Call) -> ExecFinished:
    """Execute a command at most once per journal: a journaled result is reused on resume."""
    done = ctx.journal.result(c["cmd_id"])
    if done is not None:
        return done
    if ctx.journal.has(f"exec_start:{c['cmd_id']}"):
        # Started before the run was killed, result lost: running it again could do its effect twice
        # (an append, a payment, a migration). The model is told, and decides.
        event = ExecFinished(
            key=f"exec:{c['cmd_id']}", cmd_id=c["cmd_id"], exit_code=UNKNOWN_EXIT, output=UNKNOWN_RESULT,
            duration_s=0.0, unknown=True,
        )
        ctx.journal.append(event)
        return event
    ctx.journal.append(ExecStarted(key=f"exec_start:{c['cmd_id']}", cmd_id=c["cmd_id"]))
    before = ctx.watch.before() if ctx.watch else None
    stray = ctx.watch.stray(before) if ctx.watch else []
    hosts = c.get("network")
    if hosts is not None and (c.get("decision") != "ask" or c.get("approval") == "approved"):
        res = run_granted(ctx, c["cmd_id"], c["command"], hosts)
    else:  # no network, or an ask nobody approved (a shadow run): no way out
        res = ctx.sandbox.exec(c["command"], cwd=ctx.workspace_mount)
    changed, over = ctx.watch.after(before) if ctx.watch else ([], None)
    exit_code, output = res.exit_code, cap(res.output, 16_000)
    if over:  # the command succeeded at filling the workspace: it fails, and the model is told why
        exit_code, output = exit_code or 1, f"{output}\nTETHER: {over}"
    event = ExecFinished(
        key=f"exec:{c['cmd_id']}", cmd_id=c["cmd_id"], exit_code=exit_code, output=output,
        duration_s=res.duration_s, timed_out=res.timed_out, changed=changed, stray=stray, secrets=list(res.secrets),
    )
    ctx.journal.append(event)
    return event
