"""CLI of the task loop: `tether run`, `tether resume`, `tether approve`, `tether deny`.

Each command parses, checks its input (exit 2 with the fix on bad input,
before anything starts), calls the runner, shows a live view on stderr and
prints the result (one JSON object on stdout with `--json`). Exit codes:
0 success, 1 failed or blocked, 2 bad input (another live run on the
workspace included: it is named), 3 interrupted or awaiting approval, 4
needs review (the gate passed, but the run touched tests that existed
before it), 5 self-verified (the gate passed, but the only proof is checks
the run wrote itself).
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tether.runtime.cli.common import (
    HomeOption,
    JsonOption,
    RunArg,
    config,
    err,
    errors_exit,
    fail,
    print_json,
    resolve_run,
)
from tether.runtime.config import TetherConfig
from tether.runtime.models.registry import spec_help
from tether.runtime.terminal import safe

if TYPE_CHECKING:  # the runner pulls in langgraph: import it only when a run starts
    from tether.common.events import Event
    from tether.runtime.hooks.base import RunHooks, RunRecord
    from tether.runtime.run.runner import AskPerson
    from tether.runtime.views.console import LiveView
    from tether.runtime.views.event_stream import EventStream

MODEL_HELP = f"The chat model: {spec_help()} (docs/config.md)."
EXIT = {"success": 0, "failed": 1, "blocked": 1, "interrupted": 3, "needs-review": 4, "self-verified": 5}
YesOption = Annotated[
    bool, typer.Option("--yes", help="Approve every command the guardian asks about (never overrides a deny).")
]

EventsOption = Annotated[
    bool,
    typer.Option(
        "--events",
        help="Stream the run's events as JSON lines on stdout (docs/events.md); the last line is the --json object.",
    ),
]
NoMemoryOption = Annotated[
    bool, typer.Option("--no-memory", help="Run without reading or writing memory (a baseline).")
]


def hooks_factory(cfg: TetherConfig, *, memory: bool = True) -> RunHooks:
    """Trust (snapshot, learned approvals, shadow records) and, unless turned off, memory."""
    from tether.runtime.hooks.chain import build_hooks

    return build_hooks(cfg, memory=memory)


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


def _prompt(view: LiveView) -> AskPerson:
    def ask(pending: dict[str, Any]) -> bool | None:
        view.live.stop()
        err.print(f"[bold yellow]approval needed[/] `{safe(pending['command'])}`: {safe(pending.get('reason', ''))}")
        answer = err.input("approve? [y]es / [n]o / [l]ater: ", markup=False).strip().lower()
        view.live.start()
        if answer.startswith("l"):
            return None
        return answer.startswith("y")

    return ask


def _finish(record: RunRecord, json_out: bool, stream: EventStream | None = None) -> typer.Exit:
    from tether.runtime.views.console import render_final, to_json

    if stream is not None:
        stream.memory(record.memory)
        json_out = True

    render_final(err, record)
    if record.awaiting:
        err.print(f"approve with `tether approve {record.run_id}` or refuse with `tether deny {record.run_id}`")
    elif record.status == "interrupted":
        err.print(f"continue with `tether resume {record.run_id}`")
    if json_out:
        print_json(to_json(record))
    return typer.Exit(EXIT[record.status])


def _listeners(view: LiveView, stream: EventStream | None) -> Callable[[Event], None]:
    """The live view, and the JSON-lines stream when --events asked for it."""
    if stream is None:
        return view.on_event

    def both(e: Event) -> None:
        stream(e)
        view.on_event(e)

    return both


def _stream(events: bool) -> EventStream | None:
    from tether.runtime.views.event_stream import EventStream

    return EventStream() if events else None


def _with_view(fn: Callable[[LiveView], RunRecord]) -> RunRecord:
    """Run `fn` under the live view; the view is fed by the journal's events."""
    from tether.runtime.views.console import LiveView

    view = LiveView(err)
    with view:
        try:
            return fn(view)
        except BaseException:
            view.live.transient = True  # the error line that follows stands alone, not after a half-drawn table
            raise


def run(
    goal: Annotated[str | None, typer.Argument(help="What to achieve; default: the scripted model's `goal:`.")] = None,
    workspace: Annotated[
        Path | None, typer.Option("--workspace", "-w", help="Folder the agent works in (default: current).")
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help=MODEL_HELP)] = None,
    yes: YesOption = False,
    ask_later: Annotated[
        bool,
        typer.Option(
            "--ask-later",
            help="Without a terminal, pause on an ask (exit 3) for `tether approve|deny` instead of refusing it.",
        ),
    ] = False,
    shadow: Annotated[
        bool,
        typer.Option(
            "--shadow",
            help="Shadow audit: work on a throw-away copy of the workspace (your folder is never changed); the "
                 "guardian's verdicts are recorded, not enforced; bring the changes over with `tether apply RUN`.",
        ),
    ] = False,
    no_memory: NoMemoryOption = False,
    verify: Annotated[
        list[str] | None,
        typer.Option(
            "--verify",
            help="A check of yours (repeatable): the gate runs it in a fresh shell after the run and on the pre-run "
                 "copy; it decides R07/R08.",
        ),
    ] = None,
    network: Annotated[
        str | None,
        typer.Option("--network", help="`off`: no command reaches the network in this run (default: `[network] "
                                       "mode`, `ask`: a command that needs it asks, naming its hosts)."),
    ] = None,
    json_out: JsonOption = False,
    events: EventsOption = False,
    home: HomeOption = None,
) -> None:
    """Plan GOAL, execute it step by step in the sandbox, and gate the result."""
    cfg = config(home)
    spec = model or cfg.model.spec
    with errors_exit(2):
        from tether.runtime.models.registry import build_chat_model

        chat = build_chat_model(cfg.model.model_copy(update={"spec": spec}))
    goal = goal or getattr(getattr(chat, "script", None), "goal", None)
    if not goal or not goal.strip():
        fail("no goal: pass it as an argument, or put `goal:` in the scripted model file")
    from tether.runtime.run.runner import check_goal

    with errors_exit(2):
        check_goal(goal, cfg)
    ws = (workspace or Path.cwd()).expanduser()
    if not ws.is_dir():
        fail(f"workspace {ws} is not a folder; pass --workspace DIR (an existing folder)")
    if not shadow and (
        not os.access(ws, os.W_OK | os.X_OK) or not ws.stat().st_mode & stat.S_IWUSR
    ):  # the sandbox user writes as the owner (a shadow run writes only its copy)
        fail(f"workspace {ws} is not writable; run `chmod u+w {ws}` or pass --workspace DIR (a folder you can write)")
    if network not in (None, "off", "ask"):
        fail(f"--network {network!r}: pass `off` (no network for this run) or `ask` (each command asks for its hosts)")
    interactive = _interactive() and not ask_later
    approval = "yes" if yes else "prompt" if (interactive or ask_later) else "refuse"
    from tether.runtime.run.runner import RunOptions, start_run

    checks = [*cfg.run.verify, *(verify or [])]
    if any(not c.strip() for c in checks):
        fail("an empty --verify check; pass a command, e.g. --verify 'python3 -m unittest'")
    from tether.runtime.run.totals import process_started_at

    options = RunOptions(
        started_at=process_started_at(),
        goal=goal,
        workspace=ws,
        model_spec=str(spec),
        approval=approval,
        shadow=shadow,
        memory=not no_memory,
        verify=checks,
        network=network,  # type: ignore[arg-type]  # checked above
    )
    from tether.sandbox.cleanup import install_signal_handlers

    install_signal_handlers()
    stream = _stream(events)
    with errors_exit(2):
        hooks = hooks_factory(cfg, memory=not no_memory)
        record = _with_view(
            lambda v: start_run(
                cfg,
                options,
                hooks=hooks,
                model=chat,
                ask_person=_prompt(v) if interactive else None,
                on_event=_listeners(v, stream),
            )
        )
    raise _finish(record, json_out, stream)


def _resume(run_id: str, approved: bool | None, yes: bool, json_out: bool, home: Path | None, events: bool = False,
            from_journal: bool = False, model: str | None = None) -> None:
    from tether.runtime.models.registry import build_chat_model, check_endpoint
    from tether.runtime.run.runner import check_resumable

    cfg = config(home)
    run_id = resolve_run(cfg, run_id)
    with errors_exit(2):
        meta, values = check_resumable(cfg, run_id, approved)
        if model is not None:
            build_chat_model(cfg.model.model_copy(update={"spec": model}))  # a bad spec fails here, with the fix
        elif not (values or {}).get("status"):  # a finished run is only reported: it talks to no model
            check_endpoint(cfg.model.model_copy(update={"spec": meta["model_spec"]}), meta)
        hooks = hooks_factory(cfg, memory=meta.get("memory", True))
    interactive = _interactive()
    from tether.runtime.run.runner import resume_run
    from tether.runtime.run.totals import process_started_at
    from tether.sandbox.cleanup import install_signal_handlers

    install_signal_handlers()
    _collect_orphans(cfg)
    stream = _stream(events)
    with errors_exit(2):
        record = _with_view(lambda v: resume_run(
            cfg, run_id, approved=approved, approval="yes" if yes else None, hooks=hooks,
            ask_person=_prompt(v) if interactive else None, on_event=_listeners(v, stream), from_journal=from_journal,
            model_spec=model, started_at=process_started_at(),
        ))
    raise _finish(record, json_out, stream)


def _collect_orphans(cfg: TetherConfig) -> None:
    """Remove sandboxes whose owner died (a SIGKILLed run leaves its container behind)."""
    from tether.sandbox.cleanup import collect
    from tether.sandbox.engine import connect
    from tether.sandbox.errors import SandboxError

    try:
        collect(connect(cfg.sandbox.docker_host))
    except SandboxError as e:
        err.print(f"[yellow]warning:[/] could not collect orphaned sandboxes: {safe(e)}")


FromJournalOption = Annotated[
    bool,
    typer.Option(
        "--from-journal",
        help="The run's checkpoint is gone: start its graph over, reusing every journaled command result.",
    ),
]


ResumeModelOption = Annotated[str | None, typer.Option(
    "--model", help="Continue with this model instead of the one the run recorded (its provider and endpoint); "
                    "without it, a run whose recorded endpoint differs from today's config is refused.")]


def resume(
    run_id: RunArg,
    yes: YesOption = False,
    from_journal: FromJournalOption = False,
    model: ResumeModelOption = None,
    json_out: JsonOption = False,
    events: EventsOption = False,
    home: HomeOption = None,
) -> None:
    """Continue RUN_ID after a crash, SIGKILL, Ctrl-C or pause, without re-running finished commands.

    A run that already finished is reported again, unchanged. The run talks to the model endpoint it recorded.
    """
    _resume(run_id, None, yes, json_out, home, events, from_journal, model)


def approve(
    run_id: RunArg, model: ResumeModelOption = None, json_out: JsonOption = False, events: EventsOption = False,
    home: HomeOption = None,
) -> None:
    """Approve the command RUN_ID is waiting on, and continue the run."""
    _resume(run_id, True, False, json_out, home, events, model=model)


def deny(run_id: RunArg, model: ResumeModelOption = None, json_out: JsonOption = False, events: EventsOption = False,
         home: HomeOption = None) -> None:
    """Refuse the command RUN_ID is waiting on (the model sees the refusal), and continue."""
    _resume(run_id, False, False, json_out, home, events, model=model)


def register(app: typer.Typer) -> None:
    """Add this area's commands to the main app."""
    app.command("run")(run)
    app.command("resume")(resume)
    app.command("approve")(approve)
    app.command("deny")(deny)
