"""Learned trust across agents: asks the person answers in the agent teach the trust ledger.

Post-tool payloads as documented: Claude Code `PostToolUse` (tool_name, tool_input, tool_response, tool_use_id;
https://code.claude.com/docs/en/hooks), Gemini CLI `AfterTool` (tool_name, tool_input, tool_response;
https://geminicli.com/docs/hooks/reference), Cursor `afterShellExecution` (command, output, duration;
https://cursor.com/docs/agent/hooks).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tether.runtime.agents import learn
from tether.runtime.agents.hook import handle
from tether.runtime.cli.app import app

HOME = Path("/home/p")
WS = "/home/p/proj"
PUSH = "git checkout -- src/app.py"
KIND = "git-history:git:GIT-006:checkout-workspace"
"""A promotable kind (rule GIT-006, a named file in the workspace); force pushes never promote (test_hook_red_team)."""


@pytest.fixture(autouse=True)
def _instant_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests answer at machine speed; the minimum answer time has its own test (test_hook_red_team)."""
    monkeypatch.setattr(learn, "MIN_ANSWER_S", 0.0)


def pre(command: str, n: int, session: str = "s1") -> dict[str, Any]:
    return {"session_id": session, "transcript_path": "/t.jsonl", "cwd": WS, "permission_mode": "default",
            "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command},
            "tool_use_id": f"toolu_{n}"}


def post(command: str, n: int, session: str = "s1") -> dict[str, Any]:
    return pre(command, n, session) | {"hook_event_name": "PostToolUse",
                                       "tool_response": {"stdout": "", "stderr": "", "interrupted": False}}


def call(agent: str, payload: dict[str, Any], home: Path) -> tuple[int, str, str]:
    answer, _ = handle(agent, json.dumps(payload).encode(), HOME, home)
    return answer.code, answer.stdout, answer.stderr


def decision(out: str) -> str:
    return json.loads(out)["hookSpecificOutput"]["permissionDecision"] if out else "allow"


def test_five_approvals_promote_and_a_rollback_demotes(tmp_path: Path) -> None:
    home = tmp_path / "th"
    for n in range(5):
        code, out, _ = call("claude-code", pre(PUSH, n), home)
        assert (code, decision(out)) == (0, "ask")
        assert call("claude-code", post(PUSH, n), home) == (0, "", "")
    code, out, _ = call("claude-code", pre(PUSH, 9), home)
    body = json.loads(out)["hookSpecificOutput"]
    assert code == 0 and body["permissionDecision"] == "allow" and "auto-approved" in body["permissionDecisionReason"]
    # learned across agents: Codex (which cannot ask) now lets the promoted kind run
    codex = pre(PUSH, 10) | {"turn_id": "t", "model": "gpt-5"}
    assert call("codex", codex, home) == (0, "", "")
    r = CliRunner().invoke(app, ["trust", "list", "--home", str(home), "--json"])
    kind = json.loads(r.stdout)["kinds"][KIND]
    assert kind["auto_approved"] and kind["taught_by"] == {"claude-code": {"approvals": 5, "refusals": 0}}
    r = CliRunner().invoke(app, ["hook", "rollback", KIND, "--agent", "claude-code", "--home", str(home)])
    assert r.exit_code == 0, r.output
    assert decision(call("claude-code", pre(PUSH, 11), home)[1]) == "ask"
    kind = json.loads(CliRunner().invoke(app, ["trust", "list", "--home", str(home), "--json"]).stdout)["kinds"][KIND]
    assert kind["rollbacks"] == 1 and not kind["auto_approved"]


def test_the_next_payload_after_an_unanswered_ask_is_a_refusal(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "th"
    monkeypatch.setattr(learn, "REFUSAL_GAP_S", 0.0)
    assert decision(call("claude-code", pre(PUSH, 1), home)[1]) == "ask"
    assert len(learn.pending_asks(home)) == 1
    call("claude-code", pre("ls", 2), home)  # the person said no; the model moved on
    assert learn.pending_asks(home) == []
    assert learn.taught(home) == {KIND: {"claude-code": [0, 1]}}
    call("claude-code", pre(PUSH, 3, session="other"), home)  # another session's ask stays pending
    call("claude-code", pre("ls", 4), home)
    assert [a["session"] for a in learn.pending_asks(home)] == ["other"]


def test_calls_issued_together_do_not_refuse_each_other(tmp_path: Path) -> None:
    home = tmp_path / "th"
    call("claude-code", pre(PUSH, 1), home)
    call("claude-code", pre("ls", 2), home)  # same turn, well under REFUSAL_GAP_S
    assert len(learn.pending_asks(home)) == 1
    call("claude-code", post(PUSH, 1), home)
    assert learn.taught(home) == {KIND: {"claude-code": [1, 0]}}


def test_gemini_and_cursor_learn_from_their_post_events(tmp_path: Path) -> None:
    home = tmp_path / "th"
    g = {"session_id": "g1", "transcript_path": "/t", "cwd": WS, "hook_event_name": "BeforeTool",
         "timestamp": "2026-12-01T20:00:00Z", "tool_name": "run_shell_command", "tool_input": {"command": PUSH}}
    assert json.loads(call("gemini", g, home)[1])["decision"] == "ask"
    call("gemini", g | {"hook_event_name": "AfterTool", "tool_response": {"llmContent": "", "returnDisplay": ""}},
         home)
    c = {"hook_event_name": "beforeShellExecution", "conversation_id": "c1", "generation_id": "g-1",
         "workspace_roots": [WS], "command": PUSH, "cwd": WS}
    assert json.loads(call("cursor", c, home)[1])["permission"] == "ask"
    call("cursor", c | {"hook_event_name": "afterShellExecution", "output": "", "duration": 12}, home)
    assert learn.taught(home) == {KIND: {"cursor": [1, 0], "gemini": [1, 0]}}


def test_destructive_kinds_never_promote(tmp_path: Path) -> None:
    home = tmp_path / "th"
    wipe = "find . -exec rm -rf {} +"
    for n in range(8):
        assert decision(call("claude-code", pre(wipe, n), home)[1]) == "ask"
        call("claude-code", post(wipe, n), home)
    assert decision(call("claude-code", pre(wipe, 99), home)[1]) == "ask"


def test_a_broken_ledger_keeps_the_ask(tmp_path: Path) -> None:
    home = tmp_path / "th"
    home.mkdir()
    (home / "trust.toml").write_text("not [valid toml")
    code, out, _ = call("claude-code", pre(PUSH, 1), home)
    assert code == 0 and decision(out) == "ask"


def test_shadow_blocks_nothing_and_the_audit_counts_agreement(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "th"
    monkeypatch.setattr(learn, "REFUSAL_GAP_S", 0.0)

    def shadow(payload: dict[str, Any]) -> tuple[int, str, str]:
        answer, record = handle("claude-code", json.dumps(payload).encode(), HOME, home, shadow=True)
        assert record.get("shadow") or payload["hook_event_name"] == "PostToolUse"
        return answer.code, answer.stdout, answer.stderr

    assert shadow(pre('bash -c "rm -rf /"', 1)) == (0, "", "")  # would deny; blocked nothing
    assert shadow(pre(PUSH, 2)) == (0, "", "")  # would ask: the refusal resolves it (next call, no post)
    assert shadow(pre("ls", 3)) == (0, "", "")  # would allow ...
    assert shadow(post("ls", 3)) == (0, "", "")  # ... and ran
    assert shadow(pre("git status", 4)) == (0, "", "")
    assert learn.taught(home) == {}  # shadow calls teach the ledger nothing
    r = CliRunner().invoke(app, ["audit", "--agents", "--home", str(home), "--json"])
    rows = json.loads(r.stdout)["agents"]["claude-code"]
    wipe = "filesystem-destruction:rm:FS-001:recursive-system"
    assert rows[wipe]["would_deny"] == 1 and rows[wipe]["agreement"] == 1
    assert rows[KIND]["would_ask"] == 1 and rows[KIND]["asks_ran"] == 0
    assert rows["-"]["would_allow"] == 1 and rows["-"]["agreement"] == 1.0
    assert CliRunner().invoke(app, ["audit", "--agents", "--home", str(home)]).exit_code == 0
    assert CliRunner().invoke(app, ["audit", "--home", str(home)]).exit_code == 2


def test_install_shadow_writes_the_shadow_command(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["hook", "install", "codex", "--shadow", "--user-home", str(tmp_path / "u"),
                                 "--home", str(tmp_path / "th")])
    assert r.exit_code == 0, r.output
    text = (tmp_path / "u" / ".codex" / "hooks.json").read_text()
    assert "hook codex --shadow" in text
    r = CliRunner().invoke(app, ["hook", "status", "codex", "--user-home", str(tmp_path / "u")])
    assert "shadow" in r.stdout


def test_a_persons_revoke_demotes_a_kind_the_hooks_promoted(tmp_path: Path) -> None:
    home = tmp_path / "th"
    for n in range(5):
        call("claude-code", pre(PUSH, n), home)
        call("claude-code", post(PUSH, n), home)
    assert decision(call("claude-code", pre(PUSH, 50), home)[1]) == "allow"
    assert CliRunner().invoke(app, ["trust", "revoke", KIND, "--home", str(home)]).exit_code == 0
    assert decision(call("claude-code", pre(PUSH, 51), home)[1]) == "ask"


_IN_A_NEW_PROCESS = r"""
import json, sys
from pathlib import Path
from tether.runtime.agents import learn
from tether.runtime.agents.hook import handle
learn.MIN_ANSWER_S = 0.0
home, payloads = Path(sys.argv[1]), json.loads(sys.argv[2])
for p in payloads:
    handle("claude-code", json.dumps(p).encode(), Path("/home/p"), home)
print(json.dumps(sorted(m for m in ("pydantic", "tether.runtime.config", "tether.runtime.trust.ledger")
                        if m in sys.modules)))
"""


def _in_a_new_process(home: Path, payloads: list[dict[str, Any]]) -> list[str]:
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _IN_A_NEW_PROCESS, str(home), json.dumps(payloads)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_an_answer_is_journaled_without_the_pydantic_ledger_and_counted_on_its_next_load(tmp_path: Path) -> None:
    from tether.runtime.trust import answers

    home = tmp_path / "th"
    assert _in_a_new_process(home, [pre(PUSH, 1)]) == []  # the ask: no ledger (nothing promoted, nothing journaled)
    assert _in_a_new_process(home, [post(PUSH, 1)]) == []  # the approval: journaled, no pydantic, no config
    journal = home / answers.JOURNAL
    row = json.loads(journal.read_text())
    assert (row["kind"], row["approved"], row["agent"]) == (KIND, True, "claude-code")
    assert not (home / "trust.toml").exists()  # not counted yet ...
    r = CliRunner().invoke(app, ["trust", "list", "--home", str(home), "--json"])
    kind = json.loads(r.stdout)["kinds"][KIND]  # ... until the ledger is loaded: counted once, journal emptied
    assert (kind["approvals"], kind["auto_approved"]) == (1, False)
    assert not journal.exists()
    r = CliRunner().invoke(app, ["trust", "list", "--home", str(home), "--json"])
    assert json.loads(r.stdout)["kinds"][KIND]["approvals"] == 1


def test_five_journaled_approvals_promote_on_the_next_ask_in_new_processes(tmp_path: Path) -> None:
    home = tmp_path / "th"
    for n in range(5):  # each call a new process, as agents run the hook
        _in_a_new_process(home, [pre(PUSH, n)])  # an ask of a kind with journaled answers loads the ledger (folds)
        assert _in_a_new_process(home, [post(PUSH, n)]) == []  # the answer itself never does
    assert (home / "trust-journal.jsonl").read_text().count("\n") == 1  # the last approval, not counted yet
    assert decision(call("claude-code", pre(PUSH, 9), home)[1]) == "allow"  # the ask folds the journal: promoted
    kind = json.loads(CliRunner().invoke(app, ["trust", "list", "--home", str(home), "--json"]).stdout)["kinds"][KIND]
    assert kind["auto_approved"] and kind["approvals"] == 5


def test_a_journaled_refusal_demotes_like_a_recorded_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "th"
    for n in range(5):
        call("claude-code", pre(PUSH, n), home)
        call("claude-code", post(PUSH, n), home)
    assert decision(call("claude-code", pre(PUSH, 20), home)[1]) == "allow"
    from tether.runtime.trust import answers
    from tether.runtime.trust.ledger import TrustLedger

    assert answers.append(home, [{"kind": KIND, "approved": False, "at": 1.0, "agent": "gemini"}])
    assert answers.append(home, [{"kind": KIND, "approved": False, "at": 2.0, "agent": "gemini"}])
    assert decision(call("claude-code", pre(PUSH, 21), home)[1]) == "ask"  # 5 of 7 is under 90 %: demoted
    from tether.runtime.config import load_config

    cfg = load_config(home, cwd=home)
    rec = TrustLedger.load(cfg.ledger_path, cfg.trust).data.kinds[KIND]
    assert (rec.approvals, rec.refusals, rec.promoted) == (5, 2, False)


def test_a_full_or_damaged_journal_never_loses_or_invents_an_answer(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from tether.runtime.trust import answers

    home = tmp_path / "th"
    home.mkdir()
    (home / answers.JOURNAL).write_text('{"kind": "x:y", "approved": "yes", "at": 1}\nnot json\n{"kind": 3}\n'
                                        '{"kind": "git-history:git:GIT-006:checkout-workspace", "approved": tr')
    monkeypatch.setattr(answers, "MAX_BYTES", 10)  # full: the answer goes straight to the ledger
    call("claude-code", pre(PUSH, 1), home)
    call("claude-code", post(PUSH, 1), home)
    assert not (home / answers.JOURNAL).exists()  # folded (nothing valid in it) and the answer recorded directly
    kinds = json.loads(CliRunner().invoke(app, ["trust", "list", "--home", str(home), "--json"]).stdout)["kinds"]
    assert list(kinds) == [KIND] and kinds[KIND]["approvals"] == 1


def test_an_agent_that_writes_the_journal_is_denied(tmp_path: Path) -> None:
    home = tmp_path / "th"
    row = json.dumps({"kind": KIND, "approved": True, "at": 1})
    forged = f"echo '{row}' >> ~/.local/share/tether/trust-journal.jsonl"
    answer, record = handle("claude-code", json.dumps(pre(forged, 1)).encode(), HOME, home)
    assert answer.code == 2 and record["decision"] == "deny" and "HOOK-001" in record["rules"]
