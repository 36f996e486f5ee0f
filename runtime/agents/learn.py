"""Learned trust across agents: each ask the person answers in the agent teaches the trust ledger.

The hook cannot see the person's answer directly. It keeps the asks it made
in `hook-pending.json` (Tether's home, under a lock) and resolves them:

- **approved** when the agent's post-tool event (Claude Code `PostToolUse`,
  Gemini CLI `AfterTool`, Cursor `afterShellExecution`) reports the very call
  an ask was issued for (same session, transcript, command and call id), at
  least `MIN_ANSWER_S` after the ask; the ask is consumed and its id
  remembered, so one call counts once (`resolve_post`);
- **refused** when the next pre-tool payload of the same session arrives at
  least `REFUSAL_GAP_S` later and the call never ran (the person said no and
  the model moved on; calls issued together in one turn are seconds apart
  less, so they do not refuse each other).

Each answer is recorded for the trust ledger (`runtime.trust.ledger`, source
"person"): journaled by the hook (`runtime.trust.answers`, no pydantic on the
call), counted by the ledger on its next load, so the seed's rule applies unchanged: 5 approvals at >= 90 %
promote a kind, a rollback or a revoke demotes it, destructive kinds never
promote. A promoted ask is answered as the agent's explicit allow. Who taught
what is kept in `hook-teaching.jsonl` (agent, kind, approved) for
`tether trust list`. Codex cannot ask from a hook, so it teaches nothing.

In shadow mode (`tether hook install --shadow`) the hook blocks nothing and
every call is remembered with what the guardian and the ledger would have
done; its resolution (ran or refused) goes to `hook-shadow.jsonl` for
`tether audit --agents` instead of the ledger (an agent's own allowlist may
have let it run without asking the person).

Parts: `pending_asks`, `add_ask`, `add_shadow`, `resolve_pre`, `resolve_post`,
`rollback`, `promoted`, `taught`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

from tether.common.files import open_regular, read_bytes
from tether.runtime.agents.base import Call

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from typing import Any


PENDING = "hook-pending.json"
TEACHING = "hook-teaching.jsonl"
SHADOW = "hook-shadow.jsonl"
REFUSAL_GAP_S = 1.0
MAX_PENDING = 200
MAX_AGE_S = 86400.0
MAX_PENDING_BYTES = 4 << 20
MAX_DONE = 2000
MIN_ANSWER_S = 1.0
"""An approval needs the post-tool event at least this long after the ask: a person reads before answering."""
RUNNING_MAX_S = 900.0
"""How long an allowed shell call counts as in flight without its post-tool event (agents cap a shell call at
10 minutes); older entries are dropped."""
MAX_RUNNING = 200


@contextlib.contextmanager
def _locked(home: Path) -> Iterator[dict[str, Any]]:
    """The pending asks, read and written back under an exclusive lock."""
    home.mkdir(parents=True, exist_ok=True)
    fd = open_regular(home / (PENDING + ".lock"), os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            raw = read_bytes(home / PENDING, MAX_PENDING_BYTES)
            data = json.loads(raw) if len(raw) <= MAX_PENDING_BYTES else {}
        except (OSError, ValueError):
            data = {}
        if not isinstance(data, dict) or not isinstance(data.get("asks"), list):
            data = {"asks": []}
        before = json.dumps(data, sort_keys=True)
        yield data
        now = time.time()
        data["asks"] = [a for a in data["asks"] if isinstance(a, dict) and now - a.get("at", 0) < MAX_AGE_S]
        data["asks"] = data["asks"][-MAX_PENDING:]
        running = data.get("running")
        if isinstance(running, list):
            data["running"] = [r for r in running if isinstance(r, dict)
                               and 0 <= now - float(r.get("at") or 0) < RUNNING_MAX_S][-MAX_RUNNING:]
        if json.dumps(data, sort_keys=True) != before:
            from tether.common.atomic import write_atomic  # only when something changed (tempfile costs)

            # rewritten on most agent calls: no fsync (milliseconds of disk wait each); a power cut that loses the
            # last change also ended the calls it recorded, and a lost ask only goes unlearned
            write_atomic(home / PENDING, json.dumps(data), durable=False)
    finally:
        os.close(fd)


def _key(agent: str, call: Call) -> dict[str, Any]:
    return {"agent": agent, "session": call.session, "command": call.command, "transcript": call.transcript}


def _done_key(agent: str, call_id: str, command: str) -> str:
    try:  # the interpreter's own SHA-256 (the same digest as hashlib's, without OpenSSL's ~3 ms import)
        from _sha256 import sha256  # type: ignore[import-not-found]  # Python 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found, no-redef]  # Python 3.12+
        except ImportError:
            from hashlib import sha256  # type: ignore[no-redef]

    return f"{agent}:{call_id}:{sha256(command.encode('utf-8', 'replace')).hexdigest()[:16]}"


def _fresh(data: dict[str, Any], agent: str, call_id: str, command: str) -> bool:
    """Whether this call may open a pending entry: never a call (id and command; an agent such as Cursor gives
    several calls of one generation the same id) already pending or already settled."""
    if not call_id:
        return True
    done = data.setdefault("done", [])
    return (_done_key(agent, call_id, command) not in done
            and not any(a.get("agent") == agent and a.get("id") == call_id and a.get("command") == command
                        for a in data["asks"]))


def _settled(data: dict[str, Any], agent: str, call_id: str, command: str) -> None:
    if call_id:
        done = data.setdefault("done", [])
        done.append(_done_key(agent, call_id, command))
        data["done"] = done[-MAX_DONE:]


def pending_asks(home: Path) -> list[dict[str, Any]]:
    """The asks not yet resolved (for tests and `tether hook status`)."""
    with _locked(home) as data:
        return list(data["asks"])


def add_ask(home: Path, agent: str, calls: list[Call], call_id: str, kinds: list[str]) -> None:
    """Remember an ask the hook made, to learn the person's answer later."""
    if not kinds:
        return
    with _locked(home) as data:
        for call in calls:
            if _fresh(data, agent, call_id, call.command):
                data["asks"].append(_key(agent, call) | {"id": call_id, "kinds": kinds, "at": time.time()})


def add_shadow(home: Path, agent: str, calls: list[Call], call_id: str, decision: str, effective: str,
               kinds: list[str]) -> None:
    """Shadow mode: remember every call and what the guardian and the ledger would have done with it."""
    with _locked(home) as data:
        for call in calls:
            if _fresh(data, agent, call_id, call.command):
                data["asks"].append(_key(agent, call) | {"id": call_id, "kinds": kinds, "at": time.time(),
                                                         "shadow": {"decision": decision, "effective": effective}})


def add_running(home: Path, agent: str, calls: list[Call], call_id: str) -> None:
    """Remember allowed shell calls until their post-tool event: while one runs, its commands (the agent's own
    Bash) could feed forged pre/post payloads to the hook, so no post-tool event teaches (`resolve_post`)."""
    with _locked(home) as data:
        running = data.setdefault("running", [])
        running += [{"agent": agent, "id": call_id, "command": c.command, "at": time.time()} for c in calls
                    if c.kind == "shell"]


def _ended(data: dict[str, Any], agent: str, call_id: str, command: str) -> list[float]:
    """Drop this call from the in-flight shell calls; when the others (any agent, any session) started."""
    running = data.get("running")
    if not isinstance(running, list):
        return []
    gone = next((r for r in running if isinstance(r, dict) and r.get("agent") == agent
                 and (r.get("id") or "") == call_id and r.get("command") == command), None)
    data["running"] = [r for r in running if r is not gone]
    return [float(r.get("at") or 0) for r in data["running"]]


def _settle(home: Path, agent: str, entry: dict[str, Any], ran: bool) -> None:
    """One resolved entry: a shadow record for the audit, or an answer that teaches the ledger."""
    shadow = entry.get("shadow")
    if isinstance(shadow, dict):
        from tether.runtime.agents.log import append

        append(home, {"at": round(time.time(), 3), "agent": agent, "kinds": list(entry.get("kinds") or []),
                      "decision": shadow.get("decision"), "effective": shadow.get("effective"),
                      "outcome": "ran" if ran else "refused"}, name=SHADOW)
        return
    _teach(home, agent, list(entry.get("kinds") or []), approved=ran)


def _teach(home: Path, agent: str, kinds: list[str], approved: bool) -> None:
    """Journal the answer for the ledger to count on its next load (`runtime.trust.answers`: no pydantic or
    config here, ~1 s of a call), or, when the journal is full or cannot be written, record it in the ledger."""
    from tether.runtime.agents.log import append
    from tether.runtime.trust import answers

    now = round(time.time(), 3)
    rows = [{"kind": kind, "approved": approved, "at": now, "agent": agent} for kind in kinds]
    if rows and not answers.append(home, rows):
        ledger = _ledger(home)  # folds the journal first, so the answers keep their order
        for kind in kinds:
            ledger.record(kind, approved, source="person")
    for kind in kinds:
        append(home, {"at": now, "agent": agent, "kind": kind, "approved": approved}, name=TEACHING)


def resolve_pre(home: Path, agent: str, session: str, call_id: str) -> int:
    """A new pre-tool payload: earlier asks of this session that never ran were refused; how many."""
    if not (home / PENDING).exists():
        return 0
    now, refused = time.time(), []
    with _locked(home) as data:
        keep = []
        for a in data["asks"]:
            same = a.get("agent") == agent and a.get("session") == session
            this_call = bool(call_id) and a.get("id") == call_id
            if same and not this_call and now - a.get("at", now) >= REFUSAL_GAP_S:
                refused.append(a)
                _settled(data, agent, a.get("id") or "", a.get("command") or "")
            else:
                keep.append(a)
        data["asks"] = keep
    for a in refused:
        _settle(home, agent, a, ran=False)
    return len(refused)


def resolve_post(home: Path, agent: str, call: Call, call_id: str) -> int:
    """A post-tool event: the ask it matches ran, so the person approved it; how many (0 or 1).

    It matches only an ask the pre-tool hook recorded for this exact call: the same agent, session,
    transcript and command, and the same call id (both empty only for an agent that sends none). The ask is
    consumed and its id remembered, so a repeated post-tool event, or a pre-tool replay of the same id,
    counts once. A post-tool event sooner than MIN_ANSWER_S after the ask settles it without teaching:
    no person answered that fast; so does one that arrives while a shell call the hook allowed is still in
    flight (`add_running`) and started before the ask: that call's own commands may be the ones feeding the hook
    (a call allowed after the ask, issued in the same turn, does not hold it up).
    """
    if not (home / PENDING).exists():
        return 0
    key, found = _key(agent, call), []
    now = time.time()
    with _locked(home) as data:
        started = _ended(data, agent, call_id, call.command)
        keep = []
        for a in data["asks"]:
            match = (not found and all(a.get(k, "") == v for k, v in key.items())
                     and (a.get("id") or "") == call_id)
            (found if match else keep).append(a)
        data["asks"] = keep
        if found:
            _settled(data, agent, call_id, call.command)
    approved = [a for a in found if a.get("shadow") or (now - float(a.get("at") or now) >= MIN_ANSWER_S
                                                        and not any(t <= float(a.get("at") or now) for t in started))]
    for a in approved:
        _settle(home, agent, a, ran=True)
    return len(approved)


def _ledger(home: Path):  # type: ignore[no-untyped-def]
    """The trust ledger of this Tether home, with the person's trust settings (never a project's tether.toml)."""
    from tether.runtime.config import load_config
    from tether.runtime.trust.ledger import TrustLedger

    cfg = load_config(home, cwd=home)
    return TrustLedger.load_or_closed(cfg.ledger_path, cfg.trust, runs_dir=cfg.runs_dir)


def rollback(home: Path, kind: str, agent: str) -> list[str]:
    """The person undid what an agent did under `kind`: count a rollback, which demotes it; the kinds demoted.

    A shorter kind (`category:program`, `category:program:RULE`) stands for every kind on record under it.
    """
    ledger = _ledger(home)
    kinds = [kind] if kind.count(":") >= 3 else sorted(k for k in ledger.data.kinds if k == kind
                                                          or k.startswith(kind + ":"))
    for k in kinds or [kind]:
        ledger.demote(k, f"rolled back by a person after {agent}")
    return kinds or [kind]


def _maybe_promoted(home: Path, kinds: list[str]) -> bool:
    """A cheap first look (tomllib, no pydantic): False when the ledger file cannot promote all of these kinds.

    False here is always the full ledger's answer too (a file that does not parse is a closed ledger; a kind
    not marked promoted is not promoted); True only means "ask the full ledger".
    """
    try:
        raw = read_bytes(home / "trust.toml", 8 << 20)
    except OSError:  # missing or unreadable: the full ledger promotes nothing either
        return False
    if b"promoted" not in raw:  # no kind marked promoted at all (and no tomllib to import: ~4 ms of a call)
        return False
    import tomllib

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except ValueError:  # not TOML: the full ledger promotes nothing either
        return False
    table = data.get("kinds") if isinstance(data, dict) else None
    return isinstance(table, dict) and all(isinstance(table.get(k), dict) and table[k].get("promoted") is True
                                           for k in kinds)


def promoted(home: Path, kinds: list[str]) -> bool:
    """Whether every asking kind is promoted (then the ask becomes the agent's allow)."""
    if not kinds:
        return False
    from tether.runtime.trust import answers

    if not answers.mentions(home, kinds) and not _maybe_promoted(home, kinds):
        return False  # nothing journaled for these kinds, and the file promotes none of them
    ledger = _ledger(home)
    return all(ledger.is_promoted(k) for k in kinds)


def taught(home: Path) -> dict[str, dict[str, list[int]]]:
    """kind -> agent -> [approvals, refusals] the hooks recorded."""
    from tether.runtime.agents.log import read

    out: dict[str, dict[str, list[int]]] = {}
    for row in read(home, 0, name=TEACHING):
        kind, agent = row.get("kind"), row.get("agent")
        if isinstance(kind, str) and isinstance(agent, str):
            counts = out.setdefault(kind, {}).setdefault(agent, [0, 0])
            counts[0 if row.get("approved") else 1] += 1
    return out
