"""Configuration of the bash risk guardian."""

from pydantic import BaseModel, ConfigDict, Field


class GuardianConfig(BaseModel):
    """Limits of the analysis; exceeding any of them is a deny (fail closed)."""

    model_config = ConfigDict(extra="forbid")

    time_budget_ms: float = Field(default=250.0, gt=0)
    """Wall-clock budget for one check; over it the verdict is deny."""
    max_depth: int = Field(default=8, gt=0)
    """Maximum nesting of interpreter payloads (bash -c inside eval inside ...)."""
    min_write_depth: int = Field(default=3, ge=1)
    """Path components a write/delete target must have (`/etc` has 1)."""
