"""One hook call: the agent's payload (bytes from stdin) -> the guardian's verdict -> the agent's answer.

Parts:
    MAX_PAYLOAD: the most bytes read from stdin (more is a block).
    handle: payload -> (Answer, record). Fails closed: a payload over the
        bound, bytes that are not UTF-8 JSON, a field missing or of the wrong
        type, an exception anywhere: the adapter's blocking answer with a
        one-line reason. A post-tool event (the agent reporting a call that
        ran) answers nothing and only shows up in the record.
    judge_calls: the strictest verdict over the calls of one payload.
The record (agent, event, tool, command, cwd, decision, rules, exit code) is
what `log.append` writes for `tether hook log`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from tether.runtime.agents import learn, registry
from tether.runtime.agents.base import Answer, Call, Judged, PayloadError, shell_patch, write_line

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from typing import Any


MAX_PAYLOAD = 1 << 20


UNKNOWN_RULE = "HOOK-002"


def _expand(calls: list[Call]) -> list[Call]:
    """The calls, plus one write per file an `apply_patch` inside a shell line touches (same path rules as file
    writes); an apply_patch whose patch is not in the line is an unknown call (asked)."""
    out: list[Call] = []
    for call in calls:
        out.append(call)
        paths = shell_patch(call.command) if call.kind == "shell" else None
        if paths is None:
            continue
        if not paths:
            out.append(Call(f"# apply_patch with no patch text in: {call.command[:200]}", call.cwd, call.workspace,
                            call.tool, "unknown", call.session, ("?",), call.transcript))
        out += [Call(write_line(p), call.cwd, call.workspace, call.tool, "write", call.session, (p,), call.transcript)
                for p in paths]
    return out


def judge_calls(calls: list[Call], user_home: Path, tether_home: Path | None = None,
                contents: list[str] | None = None) -> Judged:
    """Judge every call with the guardian (fail closed); the strictest decision, all rules and reasons.

    A call that reaches for the hook itself or Tether's home (`tamper`) is denied whatever the guardian says;
    `contents` (the text a write would put in a file) that would call the hook makes the call an ask.
    """
    from tether.guardian.decision import SEVERITY, Where
    from tether.guardian.judge import judge
    from tether.runtime.agents.tamper import RULE, tampering
    from tether.runtime.trust.kinds import kinds_of

    out = Judged("allow")
    reasons: list[str] = []
    for call in _expand(calls):
        if call.kind == "unknown":
            out.decision = "deny" if out.decision == "deny" else "ask"
            out.rules += [UNKNOWN_RULE] if UNKNOWN_RULE not in out.rules else []
            kind = f"unknown-tool:{call.tool[:60].replace(':', '_')}:{UNKNOWN_RULE}:opaque"  # opaque: never promoted
            out.kinds += [kind] if kind not in out.kinds else []
            reasons.append(f"Tether cannot read what tool {call.tool[:60]!r} does (no command, no file path)"
                           if not call.paths else call.command.lstrip("# "))
            continue
        r = judge(call.command, Where(workspace=call.workspace, cwd=call.cwd, home=user_home))
        why = tampering([call.command, *r.decoded], call.paths, tether_home)
        if why:
            out.decision = "deny"
            out.rules += [RULE] if RULE not in out.rules else []
            reasons.append(f"{RULE}: {why}")
        if SEVERITY[r.decision] > SEVERITY[out.decision]:
            out.decision = r.decision
        out.rules += [h.id for h in r.hits if h.id not in out.rules]
        out.kinds += [k for k in kinds_of(r.hits, r.decoded) if k not in out.kinds]
        if r.decision != "allow":
            reasons.append(r.reason)
    why = tampering(contents or [], [], tether_home) if calls else ""
    if why and out.decision == "allow":
        out.decision = "ask"
        out.rules.append(RULE)
        out.kinds.append("guardian-failure:-:HOOK-001:content")
        reasons.append("HOOK-001: what this writes calls Tether's hook or names its state files (a program the agent "
                       "writes could forge approvals); the person decides")
    out.reason = "; ".join(dict.fromkeys(reasons)) if reasons else "no risk pattern matched"
    return out


def _payload(data: bytes) -> dict[str, Any]:
    if len(data) > MAX_PAYLOAD:
        msg = f"payload over {MAX_PAYLOAD} bytes"
        raise PayloadError(msg)
    try:
        payload = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        msg = f"payload is not UTF-8 JSON: {e}"
        raise PayloadError(msg) from e
    if not isinstance(payload, dict):
        msg = f"payload is a JSON {type(payload).__name__}, not an object"
        raise PayloadError(msg)
    return payload


def _contents(payload: dict[str, Any]) -> list[str]:
    """The strings of a write's tool input (the text it would put in files), bounded."""
    args = payload.get("tool_input", payload.get("args"))
    out, size = [], 0
    stack = [args]
    while stack and size < MAX_PAYLOAD:
        value = stack.pop()
        if isinstance(value, str):
            out.append(value)
            size += len(value)
        elif isinstance(value, dict):
            stack += list(value.values())
        elif isinstance(value, list):
            stack += value
    return out


def _call_id(payload: dict[str, Any]) -> str:
    for key in ("tool_use_id", "generation_id"):
        if isinstance(payload.get(key), str):
            return payload[key]
    return ""


def _learn_post(adapter: Any, agent: str, payload: dict[str, Any], home: Path) -> int:
    parsed = adapter.parse({**payload, "hook_event_name": adapter.EVENT})
    calls = [] if parsed is None else parsed if isinstance(parsed, list) else [parsed]
    return sum(learn.resolve_post(home, agent, c, _call_id(payload)) for c in calls)


def _learn_pre(adapter: Any, agent: str, payload: dict[str, Any], calls: list[Call], judged: Judged,
               home: Path, shadow: bool = False) -> None:
    """Resolve this session's earlier asks; turn a promoted ask into allow; remember a new ask (or, in shadow
    mode, every call with what would have been done)."""
    session = calls[0].session if calls else ""
    learn.resolve_pre(home, agent, session, _call_id(payload))
    auto = judged.decision == "ask" and learn.promoted(home, judged.kinds)
    if shadow:
        effective = "allow" if auto else judged.decision
        learn.add_shadow(home, agent, calls, _call_id(payload), judged.decision, effective, judged.kinds)
        return
    if auto:
        judged.decision, judged.auto = "allow", True
    elif judged.decision == "ask" and adapter.CAN_ASK:
        learn.add_ask(home, agent, calls, _call_id(payload), judged.kinds)
    post = {event for event, _ in adapter.hook_entries("")} & set(getattr(adapter, "POST_EVENTS", ()))
    if judged.decision == "allow" and post and any(c.kind == "shell" for c in calls):
        learn.add_running(home, agent, calls, _call_id(payload))


def handle(agent: str, data: bytes, user_home: Path, tether_home: Path | None = None,
           shadow: bool = False) -> tuple[Answer, dict[str, Any]]:
    """Answer one hook call of `agent` in its protocol's terms, and the record of it.

    `shadow`: judge and record what would have been done (see `learn`), but answer the agent's quiet allow,
    blocking nothing; only a payload that cannot be read still blocks.

    With `tether_home`, the call also teaches and consults the trust ledger (`learn`); a failure there is
    recorded and leaves the guardian's decision as it was (learning never loosens a verdict by failing).
    """
    record: dict[str, Any] = {"ts": round(time.time(), 3), "agent": agent}
    adapter = registry.get(agent)
    try:
        payload = _payload(data)
        event = payload.get("hook_event_name")
        record |= {"event": event if isinstance(event, str) else None,
                   "tool": payload.get("tool_name") if isinstance(payload.get("tool_name"), str) else None}
        if event in adapter.POST_EVENTS:  # type: ignore[attr-defined]
            if tether_home is not None:
                try:
                    record["approved"] = _learn_post(adapter, agent, payload, tether_home)
                except Exception as e:  # learning is best effort; the answer to a post event blocks nothing
                    record["learn_error"] = f"{type(e).__name__}: {e}"[:300]
            answer = adapter.answer(Judged("allow"), [])
            record |= {"decision": None, "exit": answer.code}
            return answer, record
        parsed = adapter.parse(payload)
        calls = [] if parsed is None else parsed if isinstance(parsed, list) else [parsed]
        judged = judge_calls(calls, user_home, tether_home,
                             _contents(payload) if any(c.kind != "shell" for c in calls) else None)
        if tether_home is not None and calls:
            try:
                _learn_pre(adapter, agent, payload, calls, judged, tether_home, shadow)
            except Exception as e:  # the guardian's verdict stands (an ask stays an ask)
                judged.decision = "ask" if judged.auto else judged.decision
                judged.auto = False
                record["learn_error"] = f"{type(e).__name__}: {e}"[:300]
        answer = adapter.answer(Judged("allow") if shadow else judged, calls)
        if shadow:
            record["shadow"] = True
        if calls:
            record |= {"command": calls[0].command if len(calls) == 1 else [c.command for c in calls],
                       "kind": calls[0].kind, "cwd": str(calls[0].cwd), "session": calls[0].session}
        record |= {"decision": judged.decision, "rules": judged.rules, "kinds": judged.kinds, "exit": answer.code}
        if judged.auto:
            record["auto"] = True
        return answer, record
    except PayloadError as e:
        answer = adapter.fail(str(e))
        record |= {"decision": "deny", "error": str(e)[:300], "exit": answer.code}
        return answer, record
    except Exception as e:  # fail closed: any error inside the hook blocks the call
        cause = f"internal error {type(e).__name__}: {e}"[:300]
        answer = adapter.fail(cause)
        record |= {"decision": "deny", "error": cause, "exit": answer.code}
        return answer, record
