"""The sandbox side of one eval task: its image, its workspace, and its tests.

Parts: `task_image` (an `environment/Dockerfile` built with no network and
no pulls, or the configured image; None and the reason when it cannot be
built), `prepare_workspace` (the environment's files copied into a fresh
workspace), `verify` (tests/ mounted read-only at /tests in a fresh sandbox
on the agent's final workspace; test.sh decides).

Pass or fail: when the tests leave a reward file, it decides (`1` passes);
otherwise test.sh's exit status does (0 passes). Harbor's test.sh writes
/logs/verifier/reward.txt, but the sandbox's root is read-only: the tests are
copied and that path rewritten to /tmp/logs/verifier, a tmpfs the agent
never saw (the verifier runs in a new container, so nothing the agent left
in /tmp or the workspace can pose as the reward).
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tether.common.walk import remove_path
from tether.runtime.eval.tasks import Task
from tether.sandbox.config import DockerSandboxConfig

if TYPE_CHECKING:
    import docker

NOT_COPIED = {"Dockerfile", "docker-compose.yaml", "docker-compose.yml", ".dockerignore"}
LOGS = "/logs/verifier"
SANDBOX_LOGS = "/tmp/logs/verifier"
TESTS_MOUNT = "/tests"
_FROM = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*(?P<image>\S+)(?:\s+AS\s+(?P<alias>\S+))?", re.I | re.M)


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()):
        h.update(f"{path.relative_to(folder)}\n".encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


Builder = Callable[["docker.DockerClient", Task, str], str]
"""Builds a task's Dockerfile into a tag some other way (the networked build); returns why it failed, or ""."""


def task_image(client: docker.DockerClient, task: Task, default: str,
               builder: Builder | None = None) -> tuple[str | None, str]:
    """(image, "") to run the task in, or (None, why it is skipped); `builder` replaces the offline engine build."""
    from tether.sandbox.engine import docker_sdk

    dockerfile = task.dockerfile
    if dockerfile is None:
        return default, ""
    errors = docker_sdk().errors
    text = dockerfile.read_text(encoding="utf-8", errors="replace")
    aliases = set()
    for m in _FROM.finditer(text):
        base = m.group("image")
        if m.group("alias"):
            aliases.add(m.group("alias").lower())
        if base.lower() in aliases or base == "scratch" or "$" in base:
            continue
        try:
            client.images.get(base)
        except errors.ImageNotFound:
            return None, (f"base image {base} is not present locally and nothing is pulled; load it "
                          f"(`docker load -i FILE.tar`, saved with `docker save {base}` on a machine that has it) or "
                          f"pull it on a connected machine (`docker pull {base}`)")
    tag = f"tether-eval/{task.name.lower()}:{_digest(task.environment)}"
    try:
        client.images.get(tag)
        return tag, ""
    except errors.ImageNotFound:
        pass
    if builder is not None:
        why = builder(client, task, tag)
        return (None, why) if why else (tag, "")
    try:
        limit = {"timeout": max(1, int(task.settings.build_timeout_s))} if task.settings.build_timeout_s else {}
        client.images.build(path=str(task.environment), tag=tag, pull=False, rm=True, forcerm=True,
                            network_mode="none", labels={"tether.eval": "1"}, **limit)
    except (errors.BuildError, errors.APIError, OSError) as e:  # OSError: a build past build_timeout_sec
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        hint = "; if it downloads packages, pass --build-network (docs/network.md)" if "RUN" in text.upper() else ""
        return None, f"environment/Dockerfile did not build offline: {first[:300]}{hint}"
    return tag, ""


def prepare_workspace(task: Task, workspace: Path) -> None:
    """A fresh workspace holding the environment's files (not the Dockerfile), links kept as links."""
    if workspace.exists():
        remove_path(workspace)  # a run's workspace may hold anything, a 2000-deep tree included
    if task.environment.is_dir():
        shutil.copytree(task.environment, workspace, symlinks=True,
                        ignore=lambda _d, names: [n for n in names if n in NOT_COPIED])
    else:
        workspace.mkdir(parents=True)


def _verifier_tests(task: Task, dest: Path) -> Path:
    """A copy of tests/ whose text files write the reward where the sandbox can."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(task.tests, dest, symlinks=False)
    for path in dest.rglob("*"):
        if path.is_file() and path.stat().st_size < 1_000_000:
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            if LOGS in text:
                path.write_text(text.replace(LOGS, SANDBOX_LOGS), encoding="utf-8")
    return dest


def verify(task: Task, workspace: Path, config: DockerSandboxConfig, cell_dir: Path, run_id: str,
           timeout_s: float) -> tuple[bool, str]:
    """Run tests/test.sh on the final workspace; (passed, one line on why)."""
    from tether.sandbox.docker import DockerSandbox

    tests = _verifier_tests(task, cell_dir / "verifier-tests")
    box_config = config.model_copy(update={"memory_mount": TESTS_MOUNT})
    with DockerSandbox(workspace, box_config, memory_dir=tests, run_id=f"{run_id}-verify") as box:
        result = box.exec(f"mkdir -p {SANDBOX_LOGS} && bash {TESTS_MOUNT}/test.sh", timeout_s=timeout_s)
        reward = box.exec(f"cat {SANDBOX_LOGS}/reward.txt 2>/dev/null || true", timeout_s=30).output.strip()
    (cell_dir / "verifier.log").write_text(result.output, encoding="utf-8", errors="replace")
    if result.timed_out:
        return False, f"test.sh timed out after {timeout_s:.0f} s"
    if reward:
        try:
            return float(reward.split()[0]) >= 1.0, f"reward.txt = {reward[:20]}"
        except ValueError:
            return False, f"reward.txt is not a number: {reward[:40]!r}"
    return result.exit_code == 0, f"test.sh exit {result.exit_code}"
