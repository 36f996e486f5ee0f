"""Configuration of the Docker sandbox; hardened values are the defaults.

Every number is bounded (a timeout of 1e308 s or a million CPUs is refused
here with the key's name, not deep inside the engine's client).
"""

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

SANDBOX_HOME = "/tmp"
"""HOME (and TMPDIR) of every command in the sandbox: the size-capped tmpfs. The guardian resolves `~` and `$HOME`
to the same folder (graphs.context.RunContext.check_context), so what it judges is what runs."""

MAX_TIMEOUT_S = 7 * 24 * 3600.0
"""Longest timeout of one command (a week): past this a socket deadline overflows the platform's time_t."""
_SIZE = re.compile(r"^[1-9][0-9]{0,12}[bkmgBKMG]?$")
_IMAGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@-]{0,254}$")


class DockerSandboxConfig(BaseModel):
    """How each task's container is built and limited."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["docker"] = "docker"
    """Backend tag; only Docker exists today."""
    image: str = "tether-sandbox:debian"
    """Image to run (a name like `repo:tag` or `repo@sha256:...`); `tether sandbox build` makes the default one
    locally."""
    docker_host: str | None = None
    """Engine URL (e.g. `unix:///var/run/docker.sock`); None uses docker's own defaults."""
    pull_missing: bool = True
    """Pull a missing image when its registry answers a 1 s probe (never for `tether-sandbox:*`)."""
    network: str = "none"
    """Docker network mode. Anything but `none` is logged as a weakening."""
    read_only_root: bool = True
    """Mount the image's root filesystem read-only."""
    tmpfs_size: str = "64m"
    """Size cap of the tmpfs mounted on /tmp."""
    user: str = "auto"
    """uid:gid the commands run as. `auto`: the workspace owner, or 1000:1000 when root owns it."""
    cap_drop_all: bool = True
    """Drop every Linux capability."""
    no_new_privileges: bool = True
    """Forbid setuid/setcap privilege gains."""
    allow_ptrace: bool = False
    """Let commands use ptrace, process_vm_readv/writev, kcmp, pidfd_getfd and personality(ADDR_NO_RANDOMIZE), e.g. for
    a debugging task (gdb, strace). Off: the seccomp profile refuses them, so a command cannot inspect pid 1 or
    other processes. Tether's own probes run as another uid either way."""
    init: bool = True
    """Run docker's tiny init as PID 1 so orphaned processes are reaped."""
    pids_limit: int = Field(default=256, gt=0, le=4_194_304)
    """Maximum processes in the container (stops fork bombs)."""
    memory: str = "512m"
    """Memory limit (swap is set equal, so no swap)."""
    cpus: float = Field(default=1.0, gt=0, le=1024, allow_inf_nan=False)
    """CPU quota in cores."""
    workspace_mount: str = "/home/tether/workspace"
    """Where the task workspace is bind-mounted read-write; 3 components deep so that files in it pass the guardian's
    minimum write depth."""
    memory_mount: str = "/memory"
    """Where the memory folder is bind-mounted read-only."""
    default_timeout_s: float = Field(default=120.0, gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)
    """Timeout of one command when the caller gives none."""
    kill_grace_s: float = Field(default=3.0, gt=0, le=3600, allow_inf_nan=False)
    """Extra seconds the client waits past a timeout before it kills the command itself."""
    executor: Literal["persistent", "exec"] = "persistent"
    """How commands reach the container: `persistent` (the default), one long-lived server per sandbox (a few ms a
    command; needs a local engine and the host's /bin/bash-static and /bin/busybox, else `exec` is used with a
    warning), or `exec`, one `docker exec` per command (tens of ms; the fallback)."""
    output_limit_bytes: int = Field(default=64_000, gt=0, le=1 << 30)
    """Output kept per command: head and tail, the middle is dropped and counted."""

    @field_validator("user")
    @classmethod
    def _not_root(cls, value: str) -> str:
        if value == "auto":
            return value
        uid, _, gid = value.partition(":")
        if not uid.isdigit() or (gid and not gid.isdigit()):
            msg = f"sandbox.user must be `auto` or numeric `uid:gid`, got {value!r}"
            raise ValueError(msg)
        if int(uid) == 0:
            msg = "sandbox.user must not be root (uid 0); use `auto` or e.g. `1000:1000`"
            raise ValueError(msg)
        return value

    @field_validator("image")
    @classmethod
    def _image_name(cls, value: str) -> str:
        if not _IMAGE.match(value):
            msg = (f"sandbox.image must be an image name like `tether-sandbox:debian` or `repo/name:tag`, got "
                   f"{value!r}; unset it for the default")
            raise ValueError(msg)
        return value

    @field_validator("memory", "tmpfs_size")
    @classmethod
    def _size(cls, value: str) -> str:
        if not _SIZE.match(value):
            msg = f"must be a size like `512m` or `2g` (a number and b, k, m or g), got {value!r}"
            raise ValueError(msg)
        return value

    @field_validator("workspace_mount", "memory_mount")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if not value.startswith("/") or value.rstrip("/") in ("", "/tmp"):
            msg = f"mount point must be an absolute path other than / and /tmp, got {value!r}"
            raise ValueError(msg)
        return value
