"""Markdown memory (the truth), its Qdrant index, ReHarness and WikiTrace."""
