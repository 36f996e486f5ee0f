"""CLI, config, model providers, task runner, trust ledger, journal and reports."""
