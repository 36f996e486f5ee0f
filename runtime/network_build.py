"""Building a Dockerfile through the egress proxy, with the person's `[network]` rules (`--build-network`).

Each RUN step is granted the hosts its line names (guardian's `network_needs`:
an install's index, a URL) and `[network] allow`; non-public addresses only
when named in `[network] addresses`. Used by `tether sandbox build
--dockerfile DIR --build-network` and `tether eval --build-network`.
`install_packages_through_proxy` is `tether sandbox build --packages`: apt in
the base image reaches the hosts of its own apt sources and `[network] allow`.
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
    from tether.sandbox.packages import PackagesResult

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


def install_packages_through_proxy(config: TetherConfig, client: docker.DockerClient, base: str, tag: str,
                                   packages: list[str], *, timeout_s: float = BUILD_TIMEOUT_S) -> PackagesResult:
    """`tether sandbox build --packages`: apt-get in `base`, the proxy open to its apt sources and `[network] allow`.

    Raises:
        ConfigError: the network is off, or an apt source is a non-public address no person named, or cannot be
        fetched through the proxy. ImageMissingError: `base` is absent. SandboxError: the install failed.
    """
    from tether.sandbox.images import DEBIAN_TAG
    from tether.sandbox.network import SandboxNetwork
    from tether.sandbox.packages import base_sources, install

    net = config.network
    if net.mode == "off":
        msg = "the network is off (`[network] mode = \"off\"`); --packages needs `ask`"
        raise ConfigError(msg)
    fix = ("build it first: `sudo tether sandbox build` (--packages adds to it)" if base == DEBIAN_TAG else
           "build or load it first (`tether sandbox build`, `docker load`); it is never pulled")
    sources = base_sources(client, base, fix)
    if sources.unreadable:
        msg = f"apt source {sources.unreadable[0]}; give the image http:// or https:// sources"
        raise ConfigError(msg)
    named = net.named_addresses()
    for host in sources.hosts:
        if _non_public(host) and not _named(host, named):
            msg = (f"{base}'s apt source {host} is a loopback, link-local or private address; name it in "
                   f"`[network] addresses` to allow it (docs/network.md)")
            raise ConfigError(msg)
    hosts = list(dict.fromkeys([*sources.hosts, *net.allow]))
    network = SandboxNetwork(net.limits(), addresses=named)
    try:
        return install(client, base, tag, packages, network, hosts, timeout_s=timeout_s)
    finally:
        network.close()


def _non_public(host: str) -> bool:
    from tether.sandbox.egress_rules import TargetError, parse_target, special

    try:
        target = parse_target(host)
    except TargetError:
        return True
    return target.ip and special(target.host)


def _named(host: str, named: list[str]) -> bool:
    from tether.sandbox.egress_rules import AllowList, TargetError, parse_target

    try:
        return AllowList.of([], named).names_address(parse_target(host))
    except TargetError:
        return False
