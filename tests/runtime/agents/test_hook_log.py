"""The log of host-side verdicts: one JSON line per hook call, bounded, shown by `tether hook log`."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tether.runtime.agents import log
from tether.runtime.cli.app import app


def test_the_log_is_bounded_to_two_files(tmp_path: Path) -> None:
    for i in range(400):
        log.append(tmp_path, {"agent": "codex", "i": i, "pad": "x" * 100}, max_bytes=4096)
    sizes = [p.stat().st_size for p in tmp_path.iterdir()]
    assert sorted(p.name for p in tmp_path.iterdir()) == [log.OLD, log.NAME] and max(sizes) <= 4096
    rows = log.read(tmp_path, 5)
    assert [r["i"] for r in rows] == [395, 396, 397, 398, 399]
    (tmp_path / log.NAME).write_text((tmp_path / log.NAME).read_text() + "not json\n[1]\n")
    assert log.read(tmp_path, 1)[0]["i"] == 399


def test_an_unwritable_home_never_raises(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    log.append(blocker / "home", {"agent": "x"})  # a file where the folder would go: dropped


def test_tether_hook_log_shows_the_newest(tmp_path: Path) -> None:
    log.append(tmp_path, {"agent": "claude-code", "decision": "deny", "rules": ["FS-001"], "command": "rm -rf /"})
    log.append(tmp_path, {"agent": "cursor", "decision": "ask", "rules": ["GIT-001"], "command": "git push -f"})
    runner = CliRunner()
    r = runner.invoke(app, ["hook", "log", "--home", str(tmp_path)])
    assert r.exit_code == 0 and "FS-001" in r.stdout and "git push -f" in r.stdout
    r = runner.invoke(app, ["hook", "log", "--home", str(tmp_path), "--agent", "cursor", "--json"])
    assert [x["agent"] for x in json.loads(r.stdout)["records"]] == ["cursor"]
