"""The operations behind `tether sandbox ...`, kept out of the CLI.

Parts: `build()` (image provisioning), `run_once()` (one command in a fresh
sandbox), `gc()` (remove orphaned containers), and `doctor()` (what is
missing to start a sandbox, each with the command that fixes it).
"""

from __future__ import annotations

import os
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from tether.common.errors import TetherError
from tether.sandbox import cleanup, engine, images
from tether.sandbox.base import ExecResult
from tether.sandbox.config import DockerSandboxConfig
from tether.sandbox.rootfs import SANDBOX_UID


def build(config: DockerSandboxConfig, *, tiny: bool = False, force: bool = False) -> images.BuildResult:
    """Build the default (Debian) or tiny image unless present; `force` rebuilds."""
    client = engine.connect(config.docker_host)
    return images.build_image(client, "tiny" if tiny else "debian", force=force)


def run_once(
    config: DockerSandboxConfig,
    command: str,
    *,
    workspace: Path | None = None,
    timeout_s: float | None = None,
    memory_dir: Path | None = None,
    notices: list[str] | None = None,
) -> ExecResult:
    """Run one command in a fresh sandbox that is removed afterwards.

    Without `workspace` a scratch folder is used and deleted afterwards.
    What the person must be told once it is removed (a late hand-back) is
    appended to `notices`.
    """
    from tether.sandbox.docker import DockerSandbox, exec_timeout

    exec_timeout(command, timeout_s, config.default_timeout_s)  # bad input fails before any engine work
    with ExitStack() as stack:
        if workspace is None:
            workspace = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tether-exec-")))
            if os.geteuid() == 0:  # our own scratch folder: hand it to the sandbox user quietly
                os.chown(workspace, SANDBOX_UID, SANDBOX_UID)
        sandbox = DockerSandbox(workspace, config, memory_dir=memory_dir)
        if notices is not None:
            stack.callback(lambda: notices.extend(sandbox.notices))  # runs after the sandbox is closed
        stack.enter_context(sandbox)
        return sandbox.exec(command, timeout_s=timeout_s)


def gc(config: DockerSandboxConfig, *, everything: bool = False) -> list[cleanup.Leftover]:
    """Remove Tether containers whose owner process is gone (all with `everything`)."""
    return cleanup.collect(engine.connect(config.docker_host), everything=everything)


CheckName = Literal["docker-sdk", "socket", "engine", "image", "sandbox"]


class Check(BaseModel):
    """One doctor finding."""

    name: CheckName
    ok: bool
    detail: str
    fix: str = ""


def _fix_of(message: str) -> str:
    """The command a TetherError message names (our messages say `run \\`...\\``)."""
    parts = message.split("`")
    return parts[1] if len(parts) >= 3 else ""


def doctor(config: DockerSandboxConfig) -> list[Check]:
    """Check, in order, what starting a sandbox needs; stop at the first failure."""
    checks: list[Check] = []

    def failed(name: CheckName, e: TetherError | str) -> list[Check]:
        checks.append(Check(name=name, ok=False, detail=str(e), fix=_fix_of(str(e))))
        return checks

    try:
        engine.docker_sdk()
    except TetherError as e:
        return failed("docker-sdk", e)
    checks.append(Check(name="docker-sdk", ok=True, detail="docker SDK importable"))
    problem = engine.socket_problem(config.docker_host)
    if problem:
        return failed("socket", problem)
    checks.append(Check(name="socket", ok=True, detail=engine.socket_path(config.docker_host) or "remote engine"))
    try:
        client = engine.connect(config.docker_host)
        version = client.version()
    except TetherError as e:
        return failed("engine", e)
    checks.append(Check(name="engine", ok=True, detail=f"Docker {version.get('Version', '?')}"))
    try:
        image_id = images.ensure_image(client, config.image, pull_missing=False)
    except TetherError as e:
        return failed("image", e)
    checks.append(Check(name="image", ok=True, detail=f"{config.image} present ({image_id[7:19]})"))
    try:
        result = run_once(config, "true", timeout_s=30)
    except TetherError as e:
        return failed("sandbox", e)
    if not result.ok:
        return failed("sandbox", f"`true` exited {result.exit_code} in the sandbox: {result.output.strip()[:200]}")
    checks.append(Check(name="sandbox", ok=True, detail=f"started and ran `true` in {result.duration_s * 1000:.0f} ms"))
    return checks
