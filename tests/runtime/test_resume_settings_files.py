"""`tether resume` never judges a run by a tether.toml the run could have written in its own workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.runtime.test_resume_early import SCRIPT
from tether.common.errors import ConfigError
from tether.runtime.config import load_config
from tether.runtime.models.scripted import Script, ScriptedChatModel
from tether.runtime.run.runner import RunOptions, resume_run, start_run
from tether.sandbox.recording import RecordingSandbox


class Killed(BaseException):
    """Stands in for SIGKILL once the run has started (its run.json is written)."""


def _killed_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, before: str | None) -> tuple[Any, str, Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    if before is not None:
        (ws / "tether.toml").write_text(before)
    monkeypatch.chdir(ws)  # the person works from the project folder: its tether.toml is read
    config = load_config(tmp_path / "home")

    def dies(*_: Any) -> RecordingSandbox:
        raise Killed

    with pytest.raises(Killed):
        start_run(config, RunOptions(goal="g", workspace=ws, model_spec="scripted:test"),
                  model=ScriptedChatModel(script=Script.model_validate(SCRIPT)), sandbox_factory=dies)
    return config, next(config.runs_dir.iterdir()).name, ws


def _resume(config: Any, run_id: str) -> Any:
    return resume_run(config, run_id, model=ScriptedChatModel(script=Script.model_validate(SCRIPT)),
                      sandbox_factory=lambda workspace, *_: RecordingSandbox(workspace))


@pytest.mark.parametrize(("before", "planted"), [
    (None, "[run]\naccept_self_verified = true\n"),  # a new tether.toml
    ("# the person's settings\n", "# the person's settings\n[run]\nhost_code = \"undo\"\n"),  # one rewritten
])
def test_resume_refuses_a_tether_toml_the_run_wrote_in_its_workspace(tmp_path, monkeypatch, before, planted):
    config, run_id, ws = _killed_run(tmp_path, monkeypatch, before)
    (ws / "tether.toml").write_text(planted)
    with pytest.raises(ConfigError, match=r"tether\.toml is inside the workspace of run .* a run may not choose"):
        _resume(config, run_id)


def test_resume_takes_the_persons_own_unchanged_tether_toml(tmp_path, monkeypatch):
    config, run_id, _ = _killed_run(tmp_path, monkeypatch, "# the person's settings\n")
    assert [s["status"] for s in _resume(config, run_id).steps] == ["done"]
