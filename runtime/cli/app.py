"""The `tether` command: a typer app assembled from one sub-module per area.

`tether guard ...` in its plain forms runs through `runtime.cli.guard_fast`
before typer, rich or any other area's module is imported (it is started once
per agent command, so start-up time matters), and `tether runs` through
`runtime.cli.runs_fast` (a person waits for it); the app itself is built on
first use (`runtime.cli.app.app`, or `main` for every other command).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not typing's: `tether hook AGENT` imports this module on every agent call
if TYPE_CHECKING:
    from typing import Any


AREAS = ("run", "runs", "guard", "hook", "sandbox", "memory", "trust", "undo", "eval", "gc")
"""The modules under runtime/cli that register commands, in the order the full app lists them."""


def build_app(only: str | None = None) -> Any:
    """The typer app: every area's commands, or only those of the area module `only` (a faster start)."""
    import importlib

    import typer

    from tether.runtime.cli.catalog import TITLE

    app = typer.Typer(
        name="tether",
        help=TITLE,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=True,
    )

    def show_version(value: bool) -> None:
        if value:
            from tether import __version__

            typer.echo(f"tether {__version__}")
            raise typer.Exit

    @app.callback()
    def root(
        version: bool = typer.Option(False, "--version", "-V", callback=show_version, is_eager=True,
                                     help="Print Tether's version and exit."),
    ) -> None:
        """Agent runtime with guarded execution and a memory that learns without rotting.

        Shell completion: `tether --install-completion` (bash, zsh, fish, PowerShell).
        """

    for area in (only,) if only else AREAS:
        importlib.import_module(f"tether.runtime.cli.{area}").register(app)
    return app


def __getattr__(name: str) -> Any:
    if name == "app":
        app = build_app()
        globals()["app"] = app
        return app
    msg = f"module 'tether.runtime.cli.app' has no attribute {name!r}"
    raise AttributeError(msg)


def main() -> None:
    """Console-script entry point: any error Tether did not foresee is one line, its traceback kept in a file."""
    args = sys.argv[1:]
    if args[:1] == ["hook"] and len(args) in (2, 3):  # the per-call hook path: before anything else is imported
        import gc

        gc.disable()  # one short call: the cyclic collector's passes over ~100 modules' objects cost ~5 ms
        try:
            from tether.runtime.cli import hook_fast

            code = hook_fast.main(args[1:])
        except Exception as e:  # fail closed: 2 blocks in every supported agent
            sys.exit(_unforeseen(e, 2))
        if code is not None:
            _FAST.append(code)
            sys.exit(code)
    completing = "_TETHER_COMPLETE" in os.environ  # shell completion calls `tether` with no arguments
    if args in ([], ["--help"]) and not completing:  # the top-level help, from the catalog: no area is imported
        from tether.runtime.cli.catalog import help_text

        sys.stdout.write(help_text())
        sys.exit(0 if args else 2)  # as typer: no arguments shows the help and exits 2
    if args[:1] == ["runs"] and not completing:  # a person waits for it: the stdlib path when it can (no logging)
        try:
            from tether.runtime.cli import runs_fast

            code = runs_fast.main(args[1:])
        except Exception as e:  # the last resort, as below
            sys.exit(_unforeseen(e))
        if code is not None:
            sys.exit(code)
    if args[:1] == ["guard"]:  # once per agent command: before logging is configured
        import gc

        if "--batch" not in args and not any(a.startswith("--batch=") for a in args):
            gc.disable()  # one command, as for the hook (a batch keeps the collector: it can be long)
        try:
            from tether.runtime.cli import guard_fast

            code = guard_fast.main(args[1:])
        except Exception as e:  # fail closed, as below
            sys.exit(_unforeseen(e, 2))
        if code is not None:
            _FAST.append(code)
            sys.exit(code)
        gc.enable()  # the typer app handles the rest
    from tether.runtime.terminal import install_log_filter

    install_log_filter()
    if args[:1] in (["--version"], ["-V"]):
        from tether import __version__

        print(f"tether {__version__}")
        return
    if args[:1] in (["run"], ["resume"], ["approve"], ["deny"]):
        from tether.runtime.run.totals import mark_process_start

        mark_process_start()
    try:
        from tether.runtime.cli.catalog import MODULE_OF

        area = MODULE_OF.get(args[0]) if args else None
        (build_app(area) if area else __getattr__("app"))()  # unknown commands and options: the full app says
    except Exception as e:  # the last resort: never a traceback on the person's terminal
        sys.exit(_unforeseen(e, 2 if args[:1] in (["guard"], ["hook"]) else 70))  # guard and hook fail closed


_FAST: list[int] = []
"""The exit code of the fast hook or guard path, once it answered (`console` then skips interpreter shutdown)."""


def console() -> None:
    """The `tether` script and `python -m tether`: `main`, then, after the per-call hook and guard paths, an exit
    that skips tearing down their ~100 modules (~10 ms of every agent call). Everything those paths write goes
    out through stdout/stderr (flushed here) or os.write, and nothing of theirs waits for shutdown."""
    try:
        main()
    except SystemExit as e:
        if not _FAST:
            raise
        code = _FAST[0]
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed or broken pipe: the exit code still tells the agent
                code = code or 2
        os._exit(code if isinstance(code, int) else 2)
        raise AssertionError from e  # not reached


def _unforeseen(e: BaseException, code: int = 70) -> int:
    """Print one line naming the error and where its traceback is (TETHER_DEBUG=1 prints it); the exit code."""
    import os
    import tempfile
    import time
    import traceback

    from tether.runtime.terminal import plain

    text = "".join(traceback.format_exception(e))
    if os.environ.get("TETHER_DEBUG") == "1":
        sys.stderr.write(text)
    where = ""
    try:
        fd, where = tempfile.mkstemp(prefix=f"tether-error-{time.strftime('%Y%m%d-%H%M%S')}-", suffix=".txt")
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
    except OSError:
        where = ""
    first = (str(e).strip().splitlines() or [""])[0][:300]
    sys.stderr.write(plain(f"error: {type(e).__name__}: {first} (an error Tether did not expect; "
                           + (f"the details are in {where}; " if where else "")
                           + "rerun with TETHER_DEBUG=1 to see them)") + "\n")
    return code


if __name__ == "__main__":
    main()
