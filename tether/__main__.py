"""`python -m tether`: the same entry point as the `tether` command."""

from tether.runtime.cli.app import console

console()
