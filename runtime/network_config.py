"""The `[network]` section: how commands in the sandbox may reach the network (see docs/network.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tether.sandbox.egress import EgressLimits
from tether.sandbox.egress_rules import AllowList, TargetError, parse_target, special


class NetworkConfig(BaseModel):
    """Network as a permission per command, through the host-side egress proxy."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["ask", "off"] = "ask"
    """`ask`: a command that needs the network (an install, fetch, clone or download) asks, naming the hosts it
    opens; `off` (`tether run --network off`): such commands are denied and no proxy is started."""
    allow: list[str] = Field(default_factory=list)
    """Hosts you always allow (`pypi.org`, `*.crates.io`, `127.0.0.1:8000`): a network command that needs only
    these does not ask, and every granted command may reach them. Loopback, link-local and private addresses are
    reached only when named here as an address (a name that resolves to one is refused)."""
    addresses: list[str] = Field(default_factory=list)
    """Loopback, link-local or private addresses, with their port (`127.0.0.1:8000`, a local index), that a command
    may be granted; every other such address is refused, whatever a command or an approval names. An address in
    `allow` counts as named too."""
    pip_index_url: str = ""
    """The pip index your commands use when the line names none (its host is what a pip install opens)."""
    npm_registry: str = ""
    """The npm registry your commands use when the line names none."""
    max_connections: int = Field(default=32, gt=0, le=1024)
    """Connections one command may hold open at once through the proxy; more are refused (503)."""
    idle_timeout_s: float = Field(default=60.0, gt=0, le=3600, allow_inf_nan=False)
    """A proxied connection with no bytes either way for this long is closed."""
    max_bytes: int = Field(default=2 << 30, gt=0)
    """Bytes (both ways, all connections) one command may move through the proxy; past it they are cut."""

    def named_addresses(self) -> list[str]:
        """Every non-public address a person named: `addresses` and the address entries of `allow`."""
        return [*self.addresses, *(a for a in self.allow if _special(a))]

    def limits(self) -> EgressLimits:
        """The proxy's bounds."""
        return EgressLimits(max_connections=self.max_connections, idle_timeout_s=self.idle_timeout_s,
                            max_bytes=self.max_bytes)

    @field_validator("allow", "addresses")
    @classmethod
    def _hosts(cls, value: list[str]) -> list[str]:
        try:
            AllowList.of(value)
        except TargetError as e:
            msg = f"{e}; name hosts like `pypi.org`, `*.crates.io` or `127.0.0.1:8000`"
            raise ValueError(msg) from e
        return [v.lower() for v in value]


def _special(entry: str) -> bool:
    try:
        t = parse_target(entry if ":" in entry.rsplit("]", 1)[-1] else entry + ":1")
    except TargetError:
        return False
    return t.ip and special(t.host)
