"""CLI commands for guard (being written)."""

import typer


def register(app: typer.Typer) -> None:
    """Add this area's commands to the main app."""
