"""`tether guard` without typer or rich: the per-command hook path, started as a new process.

Agents run `tether guard -- CMD` before every command, so its start-up time is
paid each time. `main` reads the common forms of the command line itself
(`--json`, `--explain`, `--rules`, `--workspace P`, `--cwd P`, `--user-home P`,
`--home P`, `--batch FILE`, `--`, also `--opt=value`) and imports only the guardian;
anything else (`--help`, an unknown option) returns None and the typer app
handles it, with the same behaviour and exit codes. `runtime.cli.guard` (the
typer command) uses the same functions, so both paths print the same thing.

The command: one word after `--` is the command line as written
(`tether guard -- "rm -rf build && make"`); several words are an argv and are
quoted back into one line with `shlex.join` (`tether guard -- bash -c "rm -rf /"`
judges `bash -c 'rm -rf /'`, never `bash -c rm -rf /`).

`--user-home` is the person's home folder (what `~` and `$HOME` stand for);
`--home` is Tether's home, as in every other command (the guard keeps only a
cache of compiled patterns there, `cache/`, so the next call starts faster).

Exit codes (the contract): 0 allow, 1 ask, 2 deny; 2 also for every error
(no command, an unreadable batch, an error inside Tether): the guard fails
closed. With --batch, 0 unless the input cannot be read (then one line on
stderr and 2). An agent whose hook protocol blocks only on one code (Claude
Code: 2) should run `tether hook AGENT` instead (docs/hooks.md).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tether.runtime.cli import fast_argv
from tether.runtime.terminal import plain

TYPE_CHECKING = False  # not typing's: this module starts once per agent command, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from typing import Any

EXIT = {"allow": 0, "ask": 1, "deny": 2}
_ANSI = {"allow": "32", "ask": "33", "deny": "1;31", "error": "1;31"}
_VALUED = ("--workspace", "--cwd", "--home", "--user-home", "--batch")


def _coloured(stream: Any) -> bool:
    return not (os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb" or not stream.isatty())


def _colour(stream: Any, word: str, style: str) -> str:
    return f"\x1b[{_ANSI[style]}m{word}\x1b[0m" if _coloured(stream) else word


def error(message: str) -> int:
    """`error: message` on stderr (one line); the exit code 2."""
    return fast_argv.error(message, _coloured(sys.stderr))


def command_text(words: list[str]) -> str:
    """One word is the command line as written; several are an argv, quoted with `shlex.join`."""
    if len(words) == 1:
        return words[0]
    import shlex

    return shlex.join(words)


def context(workspace: Path | None, cwd: Path | None, home: Path | None):  # type: ignore[no-untyped-def]
    """Where the command runs (plain data: no pydantic on this path); `home` is the person's home."""
    from tether.guardian.decision import Where

    ws = (workspace or Path.cwd()).absolute()
    kwargs: dict[str, Any] = {"workspace": ws, "cwd": cwd.absolute() if cwd else None}
    if home is not None:
        kwargs["home"] = home.absolute()
    return Where(**kwargs)


def _json(obj: Any) -> None:
    import json  # only for --json and --batch: the plain verdict line needs no json

    sys.stdout.write(json.dumps(obj, default=str) + "\n")
    sys.stdout.flush()


def judge(words: list[str], json_out: bool, workspace: Path | None, cwd: Path | None,
          home: Path | None) -> int:
    """Judge one command, print the verdict; the exit code."""
    from tether.guardian.judge import judge as check

    text = command_text(words)
    v = check(text, context(workspace, cwd, home))
    if json_out:
        _json({"command": text, "decision": v.decision, "rules": v.rules, "reason": v.reason,
               "decoded": v.decoded})
        return EXIT[v.decision]
    lines = [f"{_colour(sys.stdout, v.decision, v.decision)}  {plain(text)}"]
    lines += [plain(f"  {h.id:<11} {h.decision:<5} {h.kind:<34} {h.reason}") for h in v.hits]
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()
    if len(v.decoded) > 1:
        sys.stderr.write(plain("decoded: " + " | ".join(v.decoded[1:6])) + "\n")
    return EXIT[v.decision]


def batch(path: Path, workspace: Path | None, home: Path | None) -> int:
    """Judge every `{command, cwd?}` line of a JSONL file; 2 when it cannot be read."""
    import json

    from tether.guardian.judge import judge as check

    try:
        lines = path.read_text().splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
        if not all(isinstance(r, dict) and isinstance(r.get("command"), str) for r in rows):
            msg = "every line needs a string field 'command'"
            raise ValueError(msg)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        return error(f"cannot read batch {path}: {e}")
    for row in rows:
        cwd = Path(row["cwd"]) if isinstance(row.get("cwd"), str) and row["cwd"] else None
        v = check(row["command"], context(workspace, cwd, home))
        _json({"command": row["command"], "decision": v.decision, "rules": v.rules,
               "reason": v.reason})
    return 0


def main(argv: list[str]) -> int | None:
    """Run `tether guard ARGV` if the arguments are the plain forms; None to let typer do it."""
    parsed = fast_argv.read(argv, _VALUED, ("--json", "--explain", "--rules"), words=True)
    if parsed is None:
        return None
    opts, flags, words = parsed
    json_out, explain, rules = "--json" in flags, "--explain" in flags, "--rules" in flags
    paths = {k: Path(v) for k, v in opts.items()}
    if rules or explain:
        from tether.runtime.cli import guard_explain

        if rules:
            return guard_explain.rules(json_out)
        if not words:
            return error("give the command to explain after --")
        return guard_explain.explain(words, json_out, paths.get("--workspace"), paths.get("--cwd"),
                                     paths.get("--user-home"), paths.get("--home"))
    if "--batch" in paths:
        return batch(paths["--batch"], paths.get("--workspace"), paths.get("--user-home"))
    if not words:
        return error("give a command after --, or --batch FILE")
    from tether.common import rxcache
    from tether.runtime.agents.client import tether_home

    home = os.path.abspath(opts["--home"]) if opts.get("--home") else tether_home()
    rxcache.enable(os.path.join(home, "cache"))  # the guardian's patterns, compiled by an earlier call
    code = judge(words, json_out, paths.get("--workspace"), paths.get("--cwd"), paths.get("--user-home"))
    rxcache.save()
    return code
