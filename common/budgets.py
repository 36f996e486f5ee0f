"""The budgets of one run: how far the graph may go, and what the gate's R16 holds it to."""

from pydantic import BaseModel, ConfigDict, Field


class RunBudgets(BaseModel):
    """Bounds of one task (`[run]` in tether.toml holds these and more)."""

    model_config = ConfigDict(extra="forbid")

    max_steps: int = Field(default=20, gt=0)
    """Steps a plan may hold, repairs included."""
    max_commands_per_step: int = Field(default=12, gt=0)
    """Actor turns within one step."""
    max_plan_attempts: int = Field(default=3, gt=0)
    """Times the planner is asked again after an invalid plan."""
    max_replans: int = Field(default=2, ge=0)
    """Repair rounds after failed steps."""
    max_seconds: float = Field(default=1800.0, gt=0, allow_inf_nan=False)
    """Wall-clock budget of the whole run."""
    max_tokens: int = Field(default=500_000, gt=0)
    """Model token budget of the whole run."""
