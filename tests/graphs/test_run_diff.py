"""`tether show --diff` and the report show the content diff of a run: text inline, binary summarised, escaped."""

from __future__ import annotations

import shlex

import pytest
from test_host_code_routes import scenario
from typer.testing import CliRunner

from tether.runtime.cli.app import app

pytestmark = pytest.mark.docker


def test_show_diff_and_report(tether, tmp_path):
    ws = tether.workspace
    (ws / "notes.txt").write_text("first line\nold line\nlast line\n")
    (ws / "gone.txt").write_text("to be removed\n")
    (ws / "blob.bin").write_bytes(bytes(range(256)))
    (ws / "__pycache__").mkdir()
    nasty = "evil \x1b[2J\x1b]8;;http://x\x07 [bold red]markup[/]\n"
    commands = ["sed -i 's/old line/new line/' notes.txt", "rm gone.txt", "printf '\\000\\001\\002' >> blob.bin",
                f"printf %s {shlex.quote(nasty)} > '[bold]name.txt'", "echo cache > __pycache__/x.txt"]
    code, out, err = tether.run(scenario(tmp_path, commands), "--no-memory")
    assert out["status"] == "success", (out["reason"], err)
    result = CliRunner().invoke(app, ["show", out["run_id"], "--diff", "--home", str(tether.home)], env=tether.env)
    text = result.stdout
    assert result.exit_code == 0, result.stderr
    assert "-old line" in text and "+new line" in text and " first line" in text
    assert "-to be removed" in text
    assert "binary file: 256 bytes" in text and "=> 259 bytes" in text
    assert "\x1b" not in text and "\\x1b[2J" in text, "escape sequences are shown, never obeyed"
    assert "[bold]name.txt" in text and "[bold red]markup[/]" in text, "rich markup is shown as text"
    assert "a/__pycache__/x.txt" not in text and "1 generated cache file(s) not listed" in text
    plain = CliRunner().invoke(app, ["show", out["run_id"], "--home", str(tether.home)], env=tether.env).stdout
    assert "M notes.txt" in plain and "D gone.txt" in plain and "-old line" not in plain and "--diff" in plain
    _, shown, _ = tether.cli("show", out["run_id"], "--diff")
    assert "+new line" in shown["changes"]["diff"]
    page = tmp_path / "r.html"
    tether.cli("report", out["run_id"], "-o", str(page))
    html = page.read_text()
    assert "content diff" in html and "+new line" in html and "\x1b" not in html
    assert "[bold red]markup[/]" in html and "<script" not in html
