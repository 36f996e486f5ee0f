"""Shared pieces every layer may use: the error root, the atomic writer, the journal.

This package imports no layer (runtime, graphs, guardian, memory, sandbox);
tests/test_layers.py enforces that.
"""
