"""Red-team cases of `tether hook install | uninstall | status | doctor` (G5): duplicate keys, hooks turned off,
symlinked settings, and entries Tether did not write."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tether.common.errors import ConfigError
from tether.runtime.agents import settings
from tether.runtime.agents.doctor import doctor

CMD = "tether hook claude-code"


@pytest.mark.parametrize("text", [
    '{"hooks": {}, "model": "x", "hooks": {"PreToolUse": []}}\n',
    '{"hooks": {"PreToolUse": [], "PreToolUse": []}}\n',
    '{"env": {"A": "1", "A": "2"}}\n',
])
def test_duplicate_keys_are_refused_and_the_file_left_alone(tmp_path: Path, text: str) -> None:
    path = tmp_path / "settings.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match="duplicate key"):
        settings.install("claude-code", path, tmp_path / "th", CMD)
    assert path.read_text() == text
    assert "duplicate key" in settings.status("claude-code", path, tmp_path / "th")["error"]


def test_disable_all_hooks_makes_status_and_doctor_say_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETHER_HOOK_SERVER", "0")
    monkeypatch.setenv("TETHER_HOME", str(tmp_path / "th"))
    path = tmp_path / "settings.json"
    path.write_text('{\n  "disableAllHooks": true\n}\n')
    settings.install("claude-code", path, tmp_path / "th", f"{sys.executable} -m tether hook claude-code")
    assert "disableAllHooks" in settings.status("claude-code", path, tmp_path / "th")["disabled"]
    report = doctor("claude-code", path, tmp_path, tmp_path / "th")
    assert not report["ok"] and "hooks are disabled" in report["problem"]
    local = tmp_path / "local.json"  # another scope's file turning hooks off fails the doctor too
    local.write_text('{"disableAllHooks": true}')
    path.write_text(path.read_text().replace('"disableAllHooks": true', '"disableAllHooks": false'))
    assert doctor("claude-code", path, tmp_path, tmp_path / "th")["ok"]
    assert not doctor("claude-code", path, tmp_path, tmp_path / "th", [local])["ok"]


def test_a_symlinked_settings_file_is_edited_in_place(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "claude.json"
    real.parent.mkdir()
    real.write_text('{"model": "opus"}\n')
    link = tmp_path / "settings.json"
    link.symlink_to(real)
    settings.install("claude-code", link, tmp_path / "th", CMD)
    assert link.is_symlink() and CMD in real.read_text()
    assert settings.status("claude-code", link, tmp_path / "th")["installed"]
    settings.uninstall("claude-code", link, tmp_path / "th")
    assert link.is_symlink() and real.read_text() == '{"model": "opus"}\n'


def test_a_dangling_symlink_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "settings.json"
    link.symlink_to(tmp_path / "missing.json")
    with pytest.raises(ConfigError, match="symlink"):
        settings.install("claude-code", link, tmp_path / "th", CMD)
    assert link.is_symlink() and not (tmp_path / "missing.json").exists()


HAND = {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo tether hook claude-code --shadow"}]}


def test_a_hand_made_entry_does_not_count_as_installed(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"hooks": {"PreToolUse": [HAND]}}, indent=2) + "\n")
    row = settings.status("claude-code", path, tmp_path / "th")
    assert not row["installed"] and row["hand_made"] == [HAND["hooks"][0]["command"]]
    change = settings.install("claude-code", path, tmp_path / "th", CMD)  # Tether's own entry still goes in
    assert change.action == "installed"
    assert settings.status("claude-code", path, tmp_path / "th")["commands"] == [CMD, CMD]  # PreToolUse, PostToolUse


def test_uninstall_removes_only_tethers_entry(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"hooks": {"PreToolUse": [HAND]}}, indent=2) + "\n")
    original = path.read_text()
    settings.install("claude-code", path, tmp_path / "th", CMD)
    settings.uninstall("claude-code", path, tmp_path / "th")
    assert path.read_text() == original
    # reformatted by the person: the structural fallback still removes only Tether's entry
    settings.install("claude-code", path, tmp_path / "th", CMD)
    path.write_text(json.dumps(json.loads(path.read_text()), indent=4) + "\n")
    settings.uninstall("claude-code", path, tmp_path / "th")
    assert json.loads(path.read_text()) == {"hooks": {"PreToolUse": [HAND]}}
    # no install record (a hand-made entry only): uninstall leaves it
    assert settings.uninstall("claude-code", path, tmp_path / "th").action == "not-installed"
    assert json.loads(path.read_text()) == {"hooks": {"PreToolUse": [HAND]}}


def test_a_hand_made_opencode_plugin_is_neither_installed_nor_removed(tmp_path: Path) -> None:
    path = tmp_path / "tether-guard.js"
    path.write_text('// my own\nconst COMMAND = "tether hook opencode";\n')
    assert not settings.status("opencode", path, tmp_path / "th")["installed"]
    assert settings.uninstall("opencode", path, tmp_path / "th").action == "not-installed"
    assert path.exists()


def test_the_cli_says_hooks_are_disabled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from tether.runtime.cli.app import app

    monkeypatch.setenv("TETHER_HOOK_SERVER", "0")
    user, project = tmp_path / "u", tmp_path / "p"
    project.mkdir()
    args = ["--user-home", str(user), "--project", str(project), "--home", str(tmp_path / "th")]
    runner = CliRunner()
    assert runner.invoke(app, ["hook", "install", "claude-code", *args, "--command",
                               f"{sys.executable} -m tether hook claude-code"]).exit_code == 0
    local = project / ".claude" / "settings.local.json"
    local.parent.mkdir(parents=True)
    local.write_text('{"disableAllHooks": true}\n')
    r = runner.invoke(app, ["hook", "doctor", "claude-code", *args])
    assert r.exit_code == 1 and "hooks are disabled" in r.output and "disableAllHooks" in r.output
    r = runner.invoke(app, ["hook", "status", "claude-code", *args])
    assert "disabled" in r.output
