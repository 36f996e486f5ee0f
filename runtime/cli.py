"""The `tether` command: a typer app assembled from one sub-module per area."""

from __future__ import annotations

import typer

from runtime import cli_eval, cli_guard, cli_memory, cli_run, cli_runs, cli_sandbox, cli_trust
from runtime.terminal import install_log_filter

app = typer.Typer(
    name="tether",
    help="Agent runtime with guarded execution and a memory that learns without rotting.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

for module in (cli_run, cli_runs, cli_guard, cli_sandbox, cli_memory, cli_trust, cli_eval):
    module.register(app)


def main() -> None:
    """Console-script entry point."""
    install_log_filter()
    app()


if __name__ == "__main__":
    main()
