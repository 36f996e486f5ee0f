"""Configuration of the Docker sandbox; hardened values are the defaults."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class DockerSandboxConfig(BaseModel):
    """How each task's container is built and limited."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["docker"] = "docker"
    """Backend tag; only Docker exists today."""
    image: str = "tether-sandbox:debian"
    """Image to run; `tether sandbox build` makes the default one locally."""
    network: str = "none"
    """Docker network mode. Anything but `none` is logged as a weakening."""
    read_only_root: bool = True
    """Mount the image's root filesystem read-only."""
    tmpfs_size: str = "64m"
    """Size cap of the tmpfs mounted on /tmp."""
    user: str = "1000:1000"
    """uid:gid the commands run as; never root by default."""
    cap_drop_all: bool = True
    """Drop every Linux capability."""
    no_new_privileges: bool = True
    """Forbid setuid/setcap privilege gains."""
    pids_limit: int = Field(default=256, gt=0)
    """Maximum processes in the container (stops fork bombs)."""
    memory: str = "512m"
    """Memory limit (swap is set equal, so no swap)."""
    cpus: float = Field(default=1.0, gt=0)
    """CPU quota in cores."""
    workspace_mount: str = "/workspace"
    """Where the task workspace is bind-mounted read-write."""
    memory_mount: str = "/memory"
    """Where the memory folder is bind-mounted read-only."""
    default_timeout_s: float = Field(default=120.0, gt=0)
    """Timeout of one command when the caller gives none."""
    output_limit_bytes: int = Field(default=64_000, gt=0)
    """Output kept per command: head and tail, the middle is dropped and counted."""
