"""Which module holds each top-level `tether` command, and the top-level help, without importing any of them.

Why: the areas' modules import pydantic, rich, the memory and the graphs at
load; `tether --help` needs none of that, and `tether runs` needs only its
own area. `runtime.cli.app` builds a typer app holding only the module of the
command asked for, and prints `help_text()` for `tether` and `tether --help`.
tests/runtime/test_cli_catalog.py checks this table against the full app, so
a command added to a module without a line here fails a test.
"""

from __future__ import annotations

TITLE = "Agent runtime with guarded execution and a memory that learns without rotting."
COMPLETION = "Shell completion: `tether --install-completion` (bash, zsh, fish, PowerShell)."

COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("run", "run", "Plan GOAL, execute it step by step in the sandbox, and gate the result."),
    ("resume", "run", "Continue RUN_ID after a crash, SIGKILL, Ctrl-C or pause, without re-running finished commands."),
    ("approve", "run", "Approve the command RUN_ID is waiting on, and continue the run."),
    ("deny", "run", "Refuse the command RUN_ID is waiting on (the model sees the refusal), and continue."),
    ("runs", "runs", "List runs, newest first: status, start, duration, steps done/total, gate pass/fail/n-a, "
                     "lessons used/written."),
    ("show", "runs", "The run's plan, every command (verdict, approval, exit), the gate, what it changed, lessons, "
                     "cost, next."),
    ("report", "runs", "Write one self-contained HTML report of the run (DAG, commands, gate, lessons, shadow audit)."),
    ("guard", "guard", "Judge a bash command: exit 0 allow, 1 ask, 2 deny (2 also for any error)."),
    ("audit", "trust", "Shadow report of a run (or, with --agents, of other agents): would-be denies, asks, agreement "
                       "per kind."),
    ("rollback", "undo", "Undo what RUN_ID changed, and only that; refuse, showing each conflict, where you changed "
                         "it since."),
    ("apply", "undo", "Bring a shadow run's changes over from its copy into your folder; refuse, showing each "
                      "conflict."),
    ("eval", "eval", "Measure what memory does on TASKS: Gain and Regression against a no-memory majority, with the "
                     "noise band."),
    ("gc", "gc", "Prune finished runs' checkpoints and old snapshots, merge near-equal lessons; a live run is never "
                 "touched."),
    ("hook", "hook", "The guardian as a hook of other agents (Claude Code, Codex CLI, Gemini CLI, Cursor, OpenCode)."),
    ("sandbox", "sandbox", "Docker sandbox: image, one-off commands, cleanup, diagnosis."),
    ("memory", "memory", "Inspect, search, rebuild and prune the agent's memory."),
    ("trust", "trust", "Inspect and edit the trust ledger (what is auto-approved)."),
    ("snapshot", "trust", "Workspace snapshots taken before each run (what `tether rollback` restores)."),
)
"""(command, module under runtime/cli, one-line help) in the order the full app lists them."""

MODULE_OF = {name: module for name, module, _ in COMMANDS}
OPTIONS = (
    ("--version, -V", "Print Tether's version and exit."),
    ("--install-completion", "Install completion for the current shell."),
    ("--show-completion", "Show completion for the current shell, to copy it or customize the installation."),
    ("--help", "Show this message and exit."),
)


def help_text() -> str:
    """The top-level help: usage, the options and every command with its line, as plain text."""
    width = max(len(name) for name, _, _ in COMMANDS)
    owidth = max(len(o) for o, _ in OPTIONS)
    lines = ["Usage: tether [OPTIONS] COMMAND [ARGS]...", "", f"  {TITLE}", "", f"  {COMPLETION}", "", "Options:"]
    lines += [f"  {o:<{owidth}}  {h}" for o, h in OPTIONS]
    lines += ["", "Commands:"]
    lines += [f"  {name:<{width}}  {h}" for name, _, h in COMMANDS]
    lines += ["", "Run `tether COMMAND --help` for a command's options."]
    return "\n".join(lines) + "\n"
