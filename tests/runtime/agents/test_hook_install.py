"""`tether hook install | uninstall | status | doctor`: the settings file keeps every byte but the hook entry.

Settings shapes: Claude Code `hooks.PreToolUse[] {matcher, hooks: [{type, command}]}` in .claude/settings.json
(https://code.claude.com/docs/en/hooks); Codex the same shape in .codex/hooks.json
(https://developers.openai.com/codex/hooks); Gemini CLI `hooks.BeforeTool[] {matcher, hooks: [{name, type,
command}]}` in .gemini/settings.json (https://geminicli.com/docs/hooks/reference); Cursor `{version: 1, hooks:
{beforeShellExecution: [{command}]}}` in .cursor/hooks.json (https://cursor.com/docs/agent/hooks).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tether.runtime.agents import settings
from tether.runtime.agents.doctor import doctor
from tether.runtime.agents.registry import NAMES as ALL_NAMES
from tether.runtime.cli.app import app

ORIGINALS = {
    "missing": None,
    "empty-object": "{}\n",
    "others": '{\n    "model": "opus",\n    "permissions": {"allow": ["Bash(ls:*)"]},\n    "theme": "dark"\n}\n',
    "hooks-elsewhere": '{\n  "hooks": {\n    "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]\n  }\n}',
    "compact": '{"a":1,"hooks":{}}',
    "tabs": '{\n\t"x": [1, 2],\n\t"hooks": {\n\t}\n}\n',
}
NAMES = [n for n in ALL_NAMES if n != "opencode"]  # OpenCode's hook is a plugin file (tested below)
EVENTS = {"claude-code": "PreToolUse", "codex": "PreToolUse", "gemini": "BeforeTool", "cursor": "beforeShellExecution"}


def with_event(agent: str) -> str:
    """A file that already has another hook on the same event (the new entry joins the array)."""
    other = {"command": "other-guard"} if agent == "cursor" else {
        "matcher": "Write", "hooks": [{"type": "command", "command": "fmt.sh"}]}
    event = json.dumps(EVENTS[agent])
    return ('{\n  "version": 1,\n  "hooks": {\n    ' + event + ": [\n      " + json.dumps(other)
            + '\n    ]\n  },\n  "z": null\n}\n')


@pytest.mark.parametrize("agent", NAMES)
@pytest.mark.parametrize("shape", [*ORIGINALS, "same-event"])
def test_round_trip_is_byte_identical(agent: str, shape: str, tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "settings.json"
    original = with_event(agent) if shape == "same-event" else ORIGINALS[shape]
    if original is not None:
        path.parent.mkdir(parents=True)
        path.write_text(original)
    home = tmp_path / "th"
    dry = settings.install(agent, path, home, "tether hook " + agent, dry_run=True)
    assert dry.action == "installed" and (path.read_text() if original is not None else None) == original
    change = settings.install(agent, path, home, "tether hook " + agent)
    text = path.read_text()
    data = json.loads(text)
    assert set(settings.status(agent, path, home)["commands"]) == {"tether hook " + agent}
    if original is not None:
        before = json.loads(original)
        for key, value in before.items():
            if key != "hooks":
                assert data[key] == value
        for event, groups in (before.get("hooks") or {}).items():
            assert data["hooks"][event][: len(groups)] == groups
        assert change.backup is not None and change.backup.read_text() == original
        record = json.loads((home / settings.STATE).read_text())[str(path)]
        rest = text
        for at, snippet in reversed(record["snippets"]):  # the file is the original plus the inserted entry only
            assert rest[at : at + len(snippet)] == snippet and "tether hook" in snippet
            rest = rest[:at] + rest[at + len(snippet):]
        assert rest == original
    assert settings.install(agent, path, home, "tether hook " + agent).action == "already-installed"
    assert settings.status(agent, path, home)["installed"]
    assert settings.uninstall(agent, path, home, dry_run=True).action == "uninstalled"
    assert path.read_text() == text
    assert settings.uninstall(agent, path, home).action == "uninstalled"
    if original is None:
        assert not path.exists()
    else:
        assert path.read_bytes() == original.encode()
    assert settings.uninstall(agent, path, home).action == "not-installed"


def test_a_reformatted_file_still_loses_only_the_hook(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"model": "opus"}\n')
    settings.install("claude-code", path, tmp_path / "th", "tether hook claude-code")
    path.write_text(json.dumps(json.loads(path.read_text()), indent=4) + "\n")  # the person reformatted it
    settings.uninstall("claude-code", path, tmp_path / "th")
    assert json.loads(path.read_text()) == {"model": "opus", "hooks": {}}


@pytest.mark.parametrize("text", ["{not json", "[1]", '{"hooks": []}'])
def test_a_file_tether_cannot_read_is_left_alone(text: str, tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(text)
    with pytest.raises(settings.ConfigError):
        settings.install("claude-code", path, tmp_path / "th", "tether hook claude-code")
    assert path.read_text() == text


@pytest.mark.parametrize("agent", ALL_NAMES)
def test_doctor_proves_the_installed_hook_blocks(agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETHER_HOOK_SERVER", "0")
    monkeypatch.setenv("TETHER_HOME", str(tmp_path / "th"))
    path = tmp_path / "settings.json"
    assert not doctor(agent, path, tmp_path)["ok"]
    settings.install(agent, path, tmp_path / "th", f"{sys.executable} -m tether hook {agent}")
    report = doctor(agent, path, tmp_path)
    assert report["ok"], report
    broken = tmp_path / ("broken.js" if agent == "opencode" else "broken.json")
    settings.install(agent, broken, tmp_path / "th", f"true tether hook {agent}")
    assert not doctor(agent, broken, tmp_path)["ok"]


def test_the_cli_installs_into_the_agents_file(tmp_path: Path) -> None:
    runner = CliRunner()
    user = tmp_path / "u"
    args = ["--user-home", str(user), "--home", str(tmp_path / "th")]
    r = runner.invoke(app, ["hook", "install", "gemini", *args, "--dry-run"])
    assert r.exit_code == 0 and not (user / ".gemini" / "settings.json").exists()
    r = runner.invoke(app, ["hook", "install", "gemini", *args, "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["action"] == "installed"
    r = runner.invoke(app, ["hook", "status", "gemini", *args, "--json"])
    assert [h["installed"] for h in json.loads(r.stdout)["hooks"]] == [True, False]
    assert runner.invoke(app, ["hook", "uninstall", "gemini", *args]).exit_code == 0
    assert not (user / ".gemini" / "settings.json").exists()
    assert runner.invoke(app, ["hook", "install", "nope", *args]).exit_code == 2
    assert runner.invoke(app, ["hook", "install", "cursor", "--scope", "local", *args]).exit_code == 2


def test_opencode_plugin_is_a_file_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / ".opencode" / "plugin" / "tether-guard.js"
    home = tmp_path / "th"
    assert settings.install("opencode", path, home, "tether hook opencode", dry_run=True).action == "installed"
    assert not path.exists()
    assert settings.install("opencode", path, home, "tether hook opencode").action == "installed"
    assert settings.status("opencode", path, tmp_path / "th")["commands"] == ["tether hook opencode"]
    assert settings.install("opencode", path, home, "tether hook opencode").action == "already-installed"
    assert settings.uninstall("opencode", path, home).action == "uninstalled" and not path.exists()
    path.write_text("export const Mine = async () => ({})\n")
    with pytest.raises(settings.ConfigError):
        settings.install("opencode", path, home, "tether hook opencode")
    assert settings.uninstall("opencode", path, home).action == "not-installed" and path.exists()


@pytest.mark.skipif(shutil.which("node") is None, reason="node runs the OpenCode plugin")
def test_opencode_plugin_blocks_and_passes_under_node(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETHER_HOOK_SERVER", "0")
    monkeypatch.setenv("TETHER_HOME", str(tmp_path / "th"))
    plugin = tmp_path / "tether-guard.mjs"  # OpenCode loads it as ESM; node needs the .mjs name to
    settings.install("opencode", plugin, tmp_path / "th", f"{sys.executable} -m tether hook opencode")
    script = tmp_path / "drive.mjs"
    script.write_text(
        "import { TetherGuard } from './tether-guard.mjs';\n"
        "const hooks = await TetherGuard({ directory: process.argv[2] });\n"
        "const out = [];\n"
        "for (const command of ['ls -la', 'bash -c \"rm -rf /\"']) {\n"
        "  try { await hooks['tool.execute.before']({ tool: 'bash', sessionID: 's', callID: 'c' },"
        " { args: { command } }); out.push('allow'); }\n"
        "  catch (e) { out.push('blocked: ' + e.message); }\n"
        "}\n"
        "console.log(JSON.stringify(out));\n")
    r = subprocess.run(["node", str(script), "/home/p/proj"], capture_output=True, text=True, timeout=120,
                       check=False, cwd=tmp_path)
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got[0] == "allow" and got[1].startswith("blocked: Tether's guardian blocked this command: FS-001"), r
