"""CLI of the memory eval: `tether eval TASKS --model SPEC [--json] [--jobs N] [--out DIR]`.

Parses, checks its input (exit 2 with the fix before anything runs), calls
`runtime.eval.run.run_eval`, reports each cell on stderr as it ends, and
prints the markdown report (or, with --json, one JSON object on stdout).
Exit 0 when every cell ran, 1 when some could not (rerun to retry them).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tether.runtime.cli.common import (
    HomeOption,
    JsonOption,
    config,
    err,
    errors_exit,
    out,
    print_json,
)
from tether.runtime.terminal import plain, safe

if TYPE_CHECKING:
    from tether.runtime.eval.cells import CellResult
    from tether.runtime.eval.run import Progress


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def _progress(result: CellResult, progress: Progress) -> None:
    mark = {True: "[green]pass[/]", False: "[red]fail[/]", None: "[yellow]–[/]"}[result.passed]
    extra = f" ({safe(result.reason)})" if result.status != "done" or result.passed is None else ""
    left = progress.left_s
    eta = "" if left is None or progress.done == progress.total else f", about {_clock(left)} left"
    err.print(f"\\[{progress.done}/{progress.total}] {safe(result.task)} {result.method}-{result.trial}: "
              f"{result.status} {mark}{extra} [dim]({_clock(progress.elapsed_s)} so far{eta})[/]")


def eval_cmd(
    tasks: Annotated[Path, typer.Argument(help="Folder of Harbor-layout tasks (optionally train/ and test/).")],
    model: Annotated[
        str,
        typer.Option(
            "--model", help="scripted:task (each task's scripted/<method>.yaml), or any --model of tether run."
        ),
    ],
    json_out: JsonOption = False,
    jobs: Annotated[
        int, typer.Option("--jobs", min=1, help="Cells (task x method x trial) run at once, each in its own sandbox.")
    ] = 1,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Where results are kept (and resumed from). Default: HOME/evals/<tasks folder name>."
        ),
    ] = None,
    trials: Annotated[
        int,
        typer.Option(
            "--trials", min=1, help="Trials of `memory` and `lessons-only` per task (WikiTrace: 3, like the reference)."
        ),
    ] = 3,
    image: Annotated[
        str | None,
        typer.Option(
            "--image", help="Sandbox image of tasks without environment/Dockerfile (default: [sandbox] image)."
        ),
    ] = None,
    test_timeout: Annotated[
        float, typer.Option("--test-timeout", min=1, help="Seconds tests/test.sh may run.")
    ] = 600.0,
    build_network: Annotated[
        bool,
        typer.Option("--build-network", help="Build task Dockerfiles through the egress proxy: each RUN step reaches "
                                             "the hosts its line names and `[network] allow` (docs/network.md)."),
    ] = False,
    home: HomeOption = None,
) -> None:
    """Measure what memory does on TASKS: Gain and Regression against a no-memory majority, with the noise band."""
    cfg = config(home)
    from tether.runtime.eval.run import EvalOptions, run_eval

    options = EvalOptions(
        tasks=tasks.expanduser(),
        model_spec=model,
        out=(out_dir or cfg.home / "evals" / tasks.resolve().name).expanduser(),
        jobs=jobs,
        trials=trials,
        image=image,
        test_timeout_s=test_timeout,
        build_network=build_network,
    )
    from tether.sandbox.cleanup import install_signal_handlers

    install_signal_handlers()
    with errors_exit(2):
        report = run_eval(cfg, options, on_cell=_progress)
    err.print(f"results in {safe(options.out)} (eval.json, eval.md); rerun the same command to resume")
    if json_out:
        print_json(report)
    else:
        from tether.runtime.eval.report import render_markdown

        out.print(plain(render_markdown(report)), markup=False)
    from tether.runtime.eval.stats import verdict

    err.print(f"[bold]{safe(verdict(report['summary']))}[/]")
    if report["errors"]:
        err.print(f"[yellow]{len(report['errors'])} cell(s) could not run; rerun to retry them[/]")
        raise typer.Exit(1)
    if not report["summary"]["tasks_measured"]:
        skipped = sum(1 for row in report["table"] if row.get("skipped"))
        err.print(f"[bold red]no task was measured[/] ({skipped} skipped, reasons above); make their images "
                  "buildable offline (docs/eval.md) or pass tasks that run on --image")
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add this area's command to the main app."""
    app.command("eval")(eval_cmd)
