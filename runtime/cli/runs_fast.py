"""`tether runs` without typer, rich or pydantic: a person waits for it, so its start-up counts.

`main` reads the command's own options (`--status S`, `--since T`,
`--limit N`, `--json`, `--home P`, also `--opt=value`) and prints the table
from run.json files with the standard library only; anything else (`--help`,
an unknown option, a bad `--limit`) returns None and the typer command
handles it. So does a home this path cannot settle by itself: a config file
it cannot read, a home that is not a folder or cannot be created, or a
workspace a dead run left lent (`lent/*.json`: the full path hands it back
first). Of the configuration it reads only `home` (files, TETHER_HOME,
`--home`), as `runtime.config` does; the commands that use the other keys
check them. The typer command (`runtime.cli.runs`) prints through `show()`
here, so both paths print the same thing.

Every text from a run folder is passed through `runtime.terminal.one_line`
(control characters shown as visible escapes, on one line, cut): nothing
from a run reaches the terminal as a control sequence, and no markup is
read, so `[red]` in a goal prints as written.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from tether.common.errors import ConfigError
from tether.runtime.cli import fast_argv
from tether.runtime.terminal import one_line
from tether.runtime.views.run_rows import parse_since, rows
from tether.runtime.views.styles import STYLE

TYPE_CHECKING = False  # not typing's: importing typing costs a tenth of this command's start-up
if TYPE_CHECKING:
    from typing import Any, TextIO

WIDE = 120
"""Terminal columns from which `tether runs` shows every column; narrower terminals get id, status, time, goal."""
CONFIG_NAME = "tether.toml"
LENT_DIR = "lent"
"""runtime.workspace.handback.LENT_DIR: lending records a dead run may have left."""
_ANSI = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "magenta": "35", "cyan": "36"}
_VALUED = ("--status", "--since", "--limit", "--home")


def _styled(stream: TextIO) -> bool:
    """Whether `stream` gets styles: a terminal that is not dumb (rich's rule), or FORCE_COLOR."""
    if os.environ.get("FORCE_COLOR"):
        return True
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        return False
    return tty and os.environ.get("TERM", "").lower() not in ("dumb", "unknown")


def _style(text: str, style: str, on: bool) -> str:
    codes = [_ANSI[w] for w in style.split() if w in _ANSI and not (os.environ.get("NO_COLOR") and w not in
                                                                    ("bold", "dim"))]
    return f"\x1b[{';'.join(codes)}m{text}\x1b[0m" if on and codes else text


def width(stream: TextIO) -> int:
    """The terminal's columns as rich counts them: COLUMNS, else the size of stdin, stdout or stderr, else 80."""
    try:
        dumb = stream.isatty() and os.environ.get("TERM", "").lower() in ("dumb", "unknown")
    except (AttributeError, ValueError):
        dumb = False
    if dumb:
        return 80
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns):
        return int(columns)
    for fd in (0, 1, 2):
        try:
            return os.get_terminal_size(fd).columns or 80
        except (AttributeError, ValueError, OSError):
            continue
    return 80


def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if ts else "?"


def duration(seconds: float | None) -> str:
    """`4.2s`, `3m07s`, `1h02m`; `-` when unknown."""
    if seconds is None:
        return "-"
    s = int(round(seconds))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s" if s >= 60 \
        else f"{seconds:.1f}s"


def _gate(r: dict[str, Any]) -> str:
    g = r["gate"]
    return f"{g.get('pass', 0)}/{g.get('fail', 0)}/{g.get('n/a', 0)}" if g else "-"


def _of(a: int | None, b: int | None) -> str:
    return f"{'?' if a is None else a}/{'?' if b is None else b}"


def table(lines: list[dict[str, Any]], columns: int, styled: bool) -> str:
    """The listing: every column from WIDE columns on, else id, status, time and goal."""
    def status(r: dict[str, Any]) -> str:
        return _style(f"{one_line(r['status'], 12):<12}", STYLE.get(r["status"], "red"), styled)

    if columns < WIDE:
        out = [_style(f"{'run':<22} {'status':<12} {'took':>7}  goal", "bold", styled)]
        room = max(columns - 45, 10)
        out += [f"{one_line(r['run_id'], 22):<22} {status(r)} {duration(r['duration_s']):>7}  "
                f"{one_line(r['goal'], room)}" for r in lines]
        return "\n".join(out) + "\n"
    out = [_style(f"{'run':<24} {'started':<19} {'took':>7} {'status':<12} {'steps':>5} {'gate p/f/na':>11} "
                  f"{'lessons u/w':>11}  goal", "bold", styled)]
    out += [f"{one_line(r['run_id'], 24):<24} {_when(r['started_at']):<19} {duration(r['duration_s']):>7} {status(r)} "
            f"{_of(r['steps_done'], r['steps_total']):>5} {_gate(r):>11} "
            f"{_of(r['lessons_used'], r['lessons_written']):>11}  {one_line(r['goal'], 70)}" for r in lines]
    return "\n".join(out) + "\n"


def error(message: str) -> int:
    """`error: message` on stderr (one line, controls shown visibly); the exit code 2."""
    return fast_argv.error(message, _styled(sys.stderr))


def _once(action: Any) -> Any:
    """`action`, called at most once (the log filter, before the first journal that must be read)."""
    done: list[bool] = []

    def call() -> None:
        if not done:
            done.append(True)
            action()

    return call


def show(runs_dir: Path, status: str | None, since: str | None, limit: int, json_out: bool) -> int:
    """List the runs under `runs_dir` on stdout (a table, or one JSON object); the exit code."""
    from tether.runtime.terminal import install_log_filter

    try:
        lines = rows(runs_dir, status=status, since=parse_since(since) if since else None, limit=limit,
                     before_journal=_once(install_log_filter))
    except ConfigError as e:
        return error(str(e))
    if json_out:
        import json

        sys.stdout.write(json.dumps({"runs": lines}, default=str) + "\n")
    elif not lines:
        sys.stderr.write(f"no runs under {one_line(runs_dir, 100_000)}\n")
        sys.stderr.flush()
    else:
        sys.stdout.write(table(lines, width(sys.stdout), _styled(sys.stdout)))
    sys.stdout.flush()
    return 0


def _data_dir() -> Path:
    if sys.platform.startswith("linux"):  # platformdirs' rule, without importing it
        base = os.environ.get("XDG_DATA_HOME", "").strip()
        return Path(base or os.path.expanduser("~/.local/share")) / "tether"
    import platformdirs

    return Path(platformdirs.user_data_dir("tether"))


def _config_dir() -> Path:
    if sys.platform.startswith("linux"):
        base = os.environ.get("XDG_CONFIG_HOME", "").strip()
        return Path(base or os.path.expanduser("~/.config")) / "tether"
    import platformdirs

    return Path(platformdirs.user_config_dir("tether"))


def home_dir(given: str | None) -> Path | None:
    """The Tether home as runtime.config resolves it (files, then TETHER_HOME, then --home); None: ask it instead."""
    home: object = None
    for path in (_config_dir() / CONFIG_NAME, Path.cwd() / CONFIG_NAME):
        if path.is_file():
            import tomllib

            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, ValueError, RecursionError):
                return None  # the full path names the file and the fix
            home = data.get("home", home)
    home = os.environ.get("TETHER_HOME", home)
    home = given if given is not None else home
    if home is not None and (not isinstance(home, str) or not home.strip()):
        return None
    folder = (Path(home).expanduser() if home is not None else _data_dir()).resolve()
    try:
        folder.mkdir(parents=True, exist_ok=True)  # as check_home does
    except OSError:
        return None
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        return None
    lent = folder / LENT_DIR
    if lent.is_dir() and any(lent.glob("*.json")):
        return None
    return folder


def main(argv: list[str]) -> int | None:
    """Run `tether runs ARGV` if the arguments are its plain forms; None to let typer do it."""
    parsed = fast_argv.read(argv, _VALUED, ("--json",))
    if parsed is None:
        return None
    opts, flags, _ = parsed
    json_out = "--json" in flags
    limit = opts.get("--limit", "50")
    if not limit.strip().isdigit() or int(limit) < 1:
        return None
    home = home_dir(opts.get("--home"))
    if home is None:
        return None
    return show(home / "runs", opts.get("--status"), opts.get("--since"), int(limit), json_out)
