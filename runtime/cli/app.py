"""The `tether` command: a typer app assembled from one sub-module per area.

`tether guard ...` in its plain forms runs through `runtime.cli.guard_fast`
before typer, rich or any other area's module is imported (it is started once
per agent command, so start-up time matters); the app itself is built on
first use (`runtime.cli.app.app`, or `main` for every other command).
"""

from __future__ import annotations

import sys
from typing import Any


def build_app() -> Any:
    """The full typer app with every area's commands."""
    import typer

    from tether.runtime.cli import eval as cli_eval
    from tether.runtime.cli import guard as cli_guard
    from tether.runtime.cli import memory as cli_memory
    from tether.runtime.cli import run as cli_run
    from tether.runtime.cli import runs as cli_runs
    from tether.runtime.cli import sandbox as cli_sandbox
    from tether.runtime.cli import trust as cli_trust
    from tether.runtime.cli import undo as cli_undo

    app = typer.Typer(
        name="tether",
        help="Agent runtime with guarded execution and a memory that learns without rotting.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
    )
    for module in (cli_run, cli_runs, cli_guard, cli_sandbox, cli_memory, cli_trust, cli_undo, cli_eval):
        module.register(app)
    return app


def __getattr__(name: str) -> Any:
    if name == "app":
        app = build_app()
        globals()["app"] = app
        return app
    msg = f"module 'tether.runtime.cli.app' has no attribute {name!r}"
    raise AttributeError(msg)


def main() -> None:
    """Console-script entry point."""
    from tether.runtime.terminal import install_log_filter

    install_log_filter()
    args = sys.argv[1:]
    if args[:1] == ["guard"]:
        from tether.runtime.cli import guard_fast

        code = guard_fast.main(args[1:])
        if code is not None:
            sys.exit(code)
    __getattr__("app")()


if __name__ == "__main__":
    main()
