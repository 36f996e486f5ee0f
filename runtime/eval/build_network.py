"""`tether eval --build-network`: task images built step by step through the egress proxy.

The build is runtime.network_build's; every connection a step asked for is
written to `OUT/builds/<task>.json`, and a failure is the task's skip reason.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.common.atomic import write_atomic
from tether.common.errors import TetherError
from tether.runtime.config import TetherConfig
from tether.runtime.eval.tasks import Task
from tether.runtime.network_build import BUILD_TIMEOUT_S, build_through_proxy

if TYPE_CHECKING:
    import docker


def networked_builder(config: TetherConfig, folder: Path) -> Callable[[docker.DockerClient, Task, str], str]:
    """A builder for `task_image`: builds through the proxy; returns why it failed, or ""."""

    def build(client: docker.DockerClient, task: Task, tag: str) -> str:
        records: list[Any] = []
        try:
            records = build_through_proxy(config, client, task.environment, tag,
                                          timeout_s=task.settings.build_timeout_s or BUILD_TIMEOUT_S,
                                          labels={"tether.eval": "1"})
            return ""
        except TetherError as e:
            return f"environment/Dockerfile did not build through the proxy: {e}"
        except Exception as e:  # an engine error or a step past its time: the task is skipped, named
            return f"environment/Dockerfile did not build through the proxy: {type(e).__name__}: {e}"[:500]
        finally:
            folder.mkdir(parents=True, exist_ok=True)
            write_atomic(folder / f"{task.name}.json", json.dumps([asdict(r) for r in records], indent=2))

    return build
