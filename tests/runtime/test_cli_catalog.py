"""The lean top-level help and per-area app (runtime/cli/catalog.py) agree with the full typer app."""

from __future__ import annotations

import subprocess
import sys

from tether.runtime.cli.app import AREAS, build_app
from tether.runtime.cli.catalog import COMMANDS, help_text


def _listed(app) -> list[tuple[str, str]]:
    """(name, first help line) of every visible top-level command, in the order the app lists them."""
    found = []
    for c in app.registered_commands:
        if not c.hidden:
            text = c.help or (c.callback.__doc__ if c.callback else "") or ""
            found.append((c.name, text.strip().splitlines()[0]))
    for g in app.registered_groups:
        info = g.typer_instance.info if g.typer_instance else None
        found.append((g.name, (g.help or (info.help if info else "") or "").strip().splitlines()[0]))
    return found


def test_the_catalog_lists_every_command_of_the_full_app_with_its_help():
    assert [(n, h) for n, _, h in COMMANDS] == _listed(build_app())  # commands, then groups, as `--help` lists


def test_each_command_is_in_the_module_the_catalog_names():
    for area in AREAS:
        names = {n for n, _ in _listed(build_app(area))}
        assert names == {n for n, m, _ in COMMANDS if m == area}, area


def test_top_level_help_names_every_command_and_imports_no_area():
    code = ("import sys; sys.argv = ['tether', '--help']\n"
            "from tether.runtime.cli.app import main\n"
            "try:\n    main()\nexcept SystemExit as e:\n    assert e.code == 0\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('typer', 'rich', 'pydantic', 'click') "
            "or m.startswith(('tether.runtime.config', 'tether.memory', 'tether.sandbox', 'tether.graphs'))]\n"
            "assert not bad, bad\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == help_text()
    for name, _, line in COMMANDS:
        assert f"  {name} " in done.stdout and line in done.stdout


def test_no_arguments_shows_the_help_and_exits_2_as_typer_does():
    done = subprocess.run([sys.executable, "-m", "tether"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and "Commands:" in done.stdout


def test_a_command_runs_from_its_own_area_and_unknown_ones_still_fail():
    done = subprocess.run([sys.executable, "-m", "tether", "sandbox", "--help"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0 and "doctor" in done.stdout
    done = subprocess.run([sys.executable, "-m", "tether", "no-such-command"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 2 and "No such command" in done.stderr
