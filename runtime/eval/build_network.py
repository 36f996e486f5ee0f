"""`tether eval --build-network`: task images built step by step through the egress proxy.

Each RUN step of a task's Dockerfile is granted the hosts its line names (the
guardian's `network_needs`: an install's index, a URL) plus `[network] allow`;
non-public addresses only when named in `[network] addresses`. Every
connection a step asked for is written to `OUT/builds/<task>.json`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from tether.common.atomic import write_atomic
from tether.common.errors import TetherError
from tether.guardian.network_hosts import NetworkDefaults, network_needs
from tether.runtime.config import TetherConfig
from tether.runtime.eval.tasks import Task

if TYPE_CHECKING:
    import docker

BUILD_TIMEOUT_S = 1800.0


def networked_builder(config: TetherConfig, folder: Path) -> Callable[[docker.DockerClient, Task, str], str]:
    """A builder for `task_image`: builds through the proxy; returns why it failed, or ""."""
    net = config.network
    defaults = NetworkDefaults(pip_index_url=net.pip_index_url, npm_registry=net.npm_registry)

    def hosts_of(line: str) -> list[str]:
        need = network_needs(line, defaults)
        return sorted({*(need.hosts if need else []), *net.allow})

    def build(client: docker.DockerClient, task: Task, tag: str) -> str:
        from tether.sandbox.build_steps import build as build_steps
        from tether.sandbox.network import SandboxNetwork

        if net.mode == "off":
            return "the network is off (`[network] mode = \"off\"`); --build-network needs it"
        network = SandboxNetwork(net.limits(), addresses=net.named_addresses())
        records = []
        try:
            _, records = build_steps(client, task.environment, tag, network, hosts_of,
                                     timeout_s=task.settings.build_timeout_s or BUILD_TIMEOUT_S,
                                     labels={"tether.eval": "1"})
            return ""
        except TetherError as e:
            return f"environment/Dockerfile did not build through the proxy: {e}"
        except Exception as e:  # an engine error or a step past its time: the task is skipped, named
            return f"environment/Dockerfile did not build through the proxy: {type(e).__name__}: {e}"[:500]
        finally:
            network.close()
            folder.mkdir(parents=True, exist_ok=True)
            write_atomic(folder / f"{task.name}.json", json.dumps([asdict(r) for r in records], indent=2))

    return build
