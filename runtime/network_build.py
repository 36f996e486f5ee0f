"""Building a Dockerfile through the egress proxy, with the person's `[network]` rules (`--build-network`).

Each RUN step is granted the hosts its line names (guardian's `network_needs`:
an install's index, a URL) and `[network] allow`; non-public addresses only
when named in `[network] addresses`. Used by `tether sandbox build
--dockerfile DIR --build-network` and `tether eval --build-network`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tether.common.errors import ConfigError
from tether.guardian.network_hosts import NetworkDefaults, network_needs
from tether.runtime.config import TetherConfig

if TYPE_CHECKING:
    import docker

    from tether.sandbox.egress import ConnectionRecord

BUILD_TIMEOUT_S = 1800.0


def build_through_proxy(config: TetherConfig, client: docker.DockerClient, context: Path, tag: str, *,
                        timeout_s: float = BUILD_TIMEOUT_S, labels: dict[str, str] | None = None,
                        ) -> list[ConnectionRecord]:
    """Build `context/Dockerfile` into `tag`; every connection its RUN steps asked for.

    Raises:
        ConfigError: the network is off. SandboxError: the build failed (the step and its output named).
    """
    from tether.sandbox.build_steps import build
    from tether.sandbox.network import SandboxNetwork

    net = config.network
    if net.mode == "off":
        msg = "the network is off (`[network] mode = \"off\"`); a build through the proxy needs `ask`"
        raise ConfigError(msg)
    defaults = NetworkDefaults(pip_index_url=net.pip_index_url, npm_registry=net.npm_registry)

    def hosts_of(line: str) -> list[str]:
        need = network_needs(line, defaults)
        return sorted({*(need.hosts if need else []), *net.allow})

    network = SandboxNetwork(net.limits(), addresses=net.named_addresses())
    try:
        return build(client, context, tag, network, hosts_of, timeout_s=timeout_s, labels=labels)[1]
    finally:
        network.close()
