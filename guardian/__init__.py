"""Bash risk guardian (fail-closed) and the R01-R18 completion gate."""
