"""Bounds on host-side work over a workspace that the sandbox (and so the model) controls.

Every layer that walks a workspace (the sandbox's lending, the run's
manifests and snapshots, the gate, rollback) takes its deadline, depth and
size bounds from one `WorkspaceLimits`.
"""

from pydantic import BaseModel, ConfigDict, Field


class WorkspaceLimits(BaseModel):
    """Bounds on the host-side work done on a workspace the sandbox controls (see docs/sandbox.md)."""

    model_config = ConfigDict(extra="forbid")

    max_bytes: int = Field(default=100 * 2**30, gt=0)
    """Largest apparent size (the sum of file sizes, holes included) the workspace may reach; a command that grows it
    past this fails, and the model is told why."""
    max_allocated_bytes: int = Field(default=20 * 2**30, gt=0)
    """Largest space the workspace may take on disk (holes excluded); checked after each command like `max_bytes`."""
    hash_max_bytes: int = Field(default=64 * 2**20, gt=0)
    """Bytes read per file when hashing it; past this, its size, inode and times stand in for the rest (holes are never
    read)."""
    host_pass_seconds: float = Field(default=300.0, gt=0)
    """Deadline of each host-side pass over the workspace (manifest, snapshot, lending, restore); past it the pass
    stops and the run fails with the reason."""
    max_depth: int = Field(default=4096, gt=0)
    """Deepest folder nesting walked; a deeper tree fails the pass with the reason."""
    snapshot_keep: int = Field(default=20, ge=0)
    """Run snapshots kept; each new run and `tether snapshot gc` remove older ones (0 keeps all)."""
