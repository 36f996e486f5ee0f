"""Configuration of the bash risk guardian."""

from pydantic import BaseModel, ConfigDict, Field

from tether.guardian.decision import LIMITS


class GuardianConfig(BaseModel):
    """Limits of the analysis; exceeding any of them is a deny (fail closed)."""

    model_config = ConfigDict(extra="forbid")

    time_budget_ms: float = Field(default=LIMITS.time_budget_ms, gt=0)
    """CPU-time budget for one check (the checking thread's own time, without garbage collections, so a busy
    machine or a big process does not turn ordinary commands into denies); over it the verdict is deny."""
    max_depth: int = Field(default=LIMITS.max_depth, gt=0)
    """Maximum nesting of interpreter payloads (bash -c inside eval inside ...)."""
    min_write_depth: int = Field(default=LIMITS.min_write_depth, ge=1)
    """Path components a write/delete target must have (`/etc` has 1)."""
    wall_budget_ms: float = Field(default=LIMITS.wall_budget_ms, gt=0)
    """Wall-clock ceiling for one check, whatever the load (garbage collections left out); over it the verdict
    is deny."""
