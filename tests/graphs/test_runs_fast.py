"""`tether runs` on its standard-library path (runtime.cli.runs_fast): the same listing as the rich table it replaced.

Runs are real runs of the engine with the scripted model; the listing is
read the way a person does, as a new `tether` process.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console

from tether.runtime.views.console import STYLE
from tether.runtime.views.run_list import RunLine, list_runs
from tether.runtime.views.text import cell

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SCENARIOS = Path(__file__).parent / "scenarios"


def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if ts else "?"


def _dur(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    s = int(round(seconds))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s" if s >= 60 \
        else f"{seconds:.1f}s"


def rich_table(lines: list[RunLine], width: int) -> str:
    """The listing as `tether runs` printed it through rich before runs_fast (the code of main 09b345a)."""
    buf = io.StringIO()
    out = Console(file=buf, width=width, highlight=False, soft_wrap=True)

    def gate(line: RunLine) -> str:
        return f"{line.gate.get('pass', 0)}/{line.gate.get('fail', 0)}/{line.gate.get('n/a', 0)}" if line.gate else "-"

    def of(a: int | None, b: int | None) -> str:
        return f"{'?' if a is None else a}/{'?' if b is None else b}"

    if out.width < 120:
        out.print(f"[bold]{'run':<22} {'status':<12} {'took':>7}  goal[/]")
        for r in lines:
            status = f"[{STYLE.get(r.status, 'red')}]{cell(r.status, 12):<12}[/]"
            room = max(out.width - 45, 10)
            out.print(f"{cell(r.run_id, 22):<22} {status} {_dur(r.duration_s):>7}  {cell(r.goal, room)}")
        return buf.getvalue()
    out.print(f"[bold]{'run':<24} {'started':<19} {'took':>7} {'status':<12} {'steps':>5} {'gate p/f/na':>11} "
              f"{'lessons u/w':>11}  goal[/]")
    for r in lines:
        status = f"[{STYLE.get(r.status, 'red')}]{cell(r.status, 12):<12}[/]"
        out.print(f"{cell(r.run_id, 24):<24} {_when(r.started_at):<19} {_dur(r.duration_s):>7} {status} "
                  f"{of(r.steps_done, r.steps_total):>5} {gate(r):>11} {of(r.lessons_used, r.lessons_written):>11}  "
                  f"{cell(r.goal, 70)}")
    return buf.getvalue()


def tether_runs(home: Path, *args: str, columns: int = 200, env: dict[str, str] | None = None,
                importtime: bool = False) -> subprocess.CompletedProcess[str]:
    """`tether runs ARGS --home HOME` as a new process, output piped."""
    argv = [sys.executable, *(["-X", "importtime"] if importtime else []), "-m", "tether", "runs", *args,
            "--home", str(home)]
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=home.parent,
                          env={**environ, "COLUMNS": str(columns), **(env or {})})


def _hostile_run(home: Path, run_id: str, goal: str, status: str = "failed") -> None:
    folder = home / "runs" / run_id
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({
        "run_id": run_id, "goal": goal, "status": status, "started_at": time.time() - 60,
        "totals": {"wait_s": 61.5, "steps_done": 1, "steps_total": 2, "gate": {"pass": 3, "fail": 1, "n/a": 14},
                   "gate_passed": False}}))


def test_real_runs_list_as_the_rich_table_did_with_nothing_but_the_standard_library(tether):
    for scenario in (EXAMPLES / "verified-success.yaml", EXAMPLES / "unverified-claim.yaml",
                     SCENARIOS / "hostile-output.yaml"):
        code, _, err = tether.run(scenario)
        assert code in (0, 1), err
    lines = list_runs(tether.home / "runs")
    assert len(lines) == 3 and {r.status for r in lines} >= {"success", "failed"}
    for columns in (200, 120, 119, 80, 40):
        done = tether_runs(tether.home, columns=columns)
        assert done.returncode == 0, done.stderr
        assert done.stdout == rich_table(lines, columns), columns
    done = tether_runs(tether.home, "--json")
    assert json.loads(done.stdout) == {"runs": [r.model_dump() for r in lines]}
    # the options: the same selection as list_runs
    failed = tether_runs(tether.home, "--status", "failed", "--json")
    assert [r["run_id"] for r in json.loads(failed.stdout)["runs"]] == [r.run_id for r in lines if r.status == "failed"]
    assert len(json.loads(tether_runs(tether.home, "--limit=1", "--json").stdout)["runs"]) == 1
    assert json.loads(tether_runs(tether.home, "--since", "1h", "--json").stdout)["runs"]
    assert json.loads(tether_runs(tether.home, "--since", "2999-01-01", "--json").stdout)["runs"] == []
    # nothing heavy was imported on the way
    done = tether_runs(tether.home, importtime=True)
    loaded = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert not {m for m in loaded if m.split(".")[0] in ("typer", "rich", "pydantic", "docker", "langgraph")}
    assert "tether.runtime.cli.runs_fast" in loaded
    # the typer command (the path of --help and of any other form) prints the same listing
    from typer.testing import CliRunner

    from tether.runtime.cli.app import app

    result = CliRunner().invoke(app, ["runs", "--home", str(tether.home)], env={"COLUMNS": "200"})
    assert result.exit_code == 0 and result.stdout == rich_table(lines, 200)


def test_goals_with_markup_and_control_characters_print_as_visible_text(tmp_path):
    home = tmp_path / "home"
    goal = "fix [red]bug[/red] [bold]now \x1b[2J\x1b]0;pwned\x07 \r\u202eevil\nsecond line \\"
    _hostile_run(home, "20261201-101010-aaaaaa", goal)
    _hostile_run(home, "20261201-101011-bbbbbb", "plain", status="\x1b[31m[blink]odd")
    lines = list_runs(home / "runs")
    for columns in (200, 80):
        done = tether_runs(home, columns=columns)
        assert done.returncode == 0, done.stderr
        assert done.stdout == rich_table(lines, columns)
        assert not any(c in done.stdout for c in "\x1b\x07\r\u202e")
        assert "fix [red]bug[/red] [bold]now \\x1b" in done.stdout
        if columns >= 120:
            assert "[bold]now \\x1b[2J\\x1b]0;pwned\\x07 \\r\\u202eevil\\nse…" in done.stdout
        assert "\\x1b[31m[bl…" in done.stdout and done.stdout.count("\n") == 3
    listed = json.loads(tether_runs(home, "--json").stdout)["runs"]
    assert [r["goal"] for r in listed] == ["plain", goal]  # JSON keeps the text as it is (json escapes it)


def test_on_a_terminal_the_header_is_bold_and_the_status_coloured(tmp_path):
    import pty

    home = tmp_path / "home"
    _hostile_run(home, "20261201-101010-aaaaaa", "x", status="success")
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TETHER_")}
    proc = subprocess.Popen([sys.executable, "-m", "tether", "runs", "--home", str(home)], stdout=follower,
                            stderr=subprocess.PIPE, env={**env, "COLUMNS": "200", "TERM": "xterm"})
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    assert proc.wait(timeout=30) == 0
    text = out.decode()
    assert text.startswith("\x1b[1mrun ") and "\x1b[32msuccess     \x1b[0m" in text


def test_what_the_fast_path_cannot_settle_goes_to_the_full_command(tmp_path):
    home = tmp_path / "home"
    _hostile_run(home, "20261201-101010-aaaaaa", "x")
    helped = tether_runs(home, "--help")
    assert helped.returncode == 0 and "--status" in helped.stdout and "--since" in helped.stdout
    for bad, needle in ((["--limit", "0"], "--limit"), (["--bogus"], "--bogus"), (["extra"], "extra")):
        done = tether_runs(home, *bad)
        assert done.returncode == 2 and needle in done.stderr, (bad, done.stderr)
    done = tether_runs(home, "--status", "succes")
    assert done.returncode == 2 and done.stderr.startswith("error: --status 'succes' is not a run status")
    done = tether_runs(home, "--since", "yesterday")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--since" in done.stderr
    (tmp_path / "tether.toml").write_text("home = [")  # the working folder's config: unreadable TOML
    done = tether_runs(home)
    assert done.returncode == 2 and "invalid TOML" in done.stderr
    (tmp_path / "tether.toml").write_text(f'home = "{home}"\n')  # the home from the config file
    done = subprocess.run([sys.executable, "-m", "tether", "runs", "--json"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60,
                          env={k: v for k, v in os.environ.items() if not k.startswith("TETHER_")})
    assert [r["run_id"] for r in json.loads(done.stdout)["runs"]] == ["20261201-101010-aaaaaa"]
    done = tether_runs(tmp_path / "tether.toml")  # a home that is a file
    assert done.returncode == 2 and "not a folder" in done.stderr
    empty = tether_runs(tmp_path / "new-home")
    assert empty.returncode == 0 and empty.stdout == "" and empty.stderr.startswith("no runs under ")
    (home / "lent").mkdir()
    (home / "lent" / "0123456789abcdef.json").write_text("{}")  # a dead run's lending: the full path settles it
    done = tether_runs(home, "--json", importtime=True)
    assert done.returncode == 0 and "typer" in done.stderr and '"runs": [{' in done.stdout


def test_the_totals_key_is_the_runners():
    from tether.runtime.run.totals import TOTALS_KEY
    from tether.runtime.views import run_rows

    assert run_rows.TOTALS_KEY == TOTALS_KEY
