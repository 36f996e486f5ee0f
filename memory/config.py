"""Configuration of the memory cycle and its index."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class MemoryConfig(BaseModel):
    """What is read before a task, and how lessons and rules evolve after it."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    """Wrap every run in the read -> revise -> write cycle."""
    index: Literal["edge", "qdrant"] = "edge"
    """`edge`: Qdrant's in-process engine; `qdrant`: a Qdrant server via qdrant-client."""
    qdrant_url: str | None = None
    """URL of a Qdrant server when index = "qdrant" (None = qdrant-client local mode)."""
    top_k: int = Field(default=5, gt=0)
    """Lessons retrieved per task."""
    similar_runs: int = Field(default=3, ge=0)
    """Past runs retrieved per task."""
    max_new_lessons: int = Field(default=3, ge=0)
    """Lessons written per run at most."""
    rule_inject_threshold: float = 0.60
    """Rules at or above this confidence go into prompts."""
    rule_initial_confidence: float = 0.40
    """Confidence of a freshly learnt rule."""
    rule_success_delta: float = 0.03
    """Added when a task the rule applied to succeeds."""
    rule_failure_delta: float = 0.05
    """Subtracted when a task the rule applied to fails."""
    rule_retire_below: float = 0.20
    """Rules below this confidence are retired."""
    rule_window_days: float = 7.0
    """Two equal error signatures within this window make a rule."""
