"""The egress proxy's decision: may this CONNECT target be reached, and at which address.

Parts: `parse_target()` (a `host:port` from a CONNECT line or an absolute URI, with
IP-literal tricks refused), `AllowList` (the hosts one grant opens, and the few
non-public addresses a person named), `decide()` (resolve once on the host,
check every resolved address, return the one address to connect to).

The decision is made on the CONNECT target (or the absolute URI) alone; Host
headers and TLS SNI are never read for it. A name is resolved once and the
connection goes to that address, so a second lookup cannot answer otherwise.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

Resolver = Callable[[str, int], list[str]]

_LABEL = r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9])?"
_NAME = re.compile(rf"^(?=.{{1,253}}$)(?:{_LABEL}\.)*{_LABEL}$")
_NUMERIC_LABEL = re.compile(r"^(?:0x[0-9a-f]*|[0-9]+)$")
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_DOTTED_QUAD = re.compile(rf"^{_OCTET}(?:\.{_OCTET}){{3}}$")
_SPECIAL = [ipaddress.ip_network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
    "192.0.0.0/24", "192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/4", "240.0.0.0/4",
    "::/128", "::1/128", "::ffff:0:0/96", "64:ff9b::/96", "2002::/16", "fc00::/7", "fe80::/10", "ff00::/8",
)]
"""Loopback, link-local (cloud metadata at 169.254.169.254), private, carrier-grade NAT, this-network, multicast,
and the IPv6 forms that embed an IPv4 address (mapped, NAT64, 6to4): refused unless a person names the address."""


class TargetError(ValueError):
    """A target that cannot be judged (bad form, an IP-literal trick); the proxy refuses it."""


@dataclass(frozen=True)
class Target:
    host: str
    """Lower-case name, or the canonical text of an IP address."""
    port: int
    ip: bool = False
    """The host is an IP literal."""


def _canonical_ip(host: str) -> str | None:
    """The canonical text of an IP literal, None for a name; raise for a numeric form that is not canonical."""
    if host.startswith("[") and host.endswith("]"):
        try:
            addr = ipaddress.IPv6Address(host[1:-1])
        except ValueError as e:
            msg = f"{host} is not an IPv6 address (zone ids are refused)"
            raise TargetError(msg) from e
        if addr.ipv4_mapped is not None:
            msg = f"{host} is an IPv4-mapped IPv6 address; name the IPv4 address itself"
            raise TargetError(msg)
        return str(addr)
    if _DOTTED_QUAD.match(host):
        return str(ipaddress.IPv4Address(host))
    if all(_NUMERIC_LABEL.match(label) for label in host.split(".")):
        # decimal (2130706433), octal (0177.0.0.1), hex (0x7f.1) or short (127.1) IPv4 forms that resolvers expand
        msg = f"{host} is an IP address in a non-canonical form; write it as a dotted quad"
        raise TargetError(msg)
    return None


def parse_target(authority: str, default_port: int | None = None) -> Target:
    """`host:port` (CONNECT) or the authority of a URI; raise TargetError for anything odd."""
    raw = authority.strip()
    if not raw or len(raw) > 300 or any(c in raw for c in "@/\\?# \t%"):
        msg = f"{raw[:80]!r} is not a host:port target"
        raise TargetError(msg)
    if raw.startswith("["):
        end = raw.find("]")
        host, rest = raw[: end + 1], raw[end + 1 :]
        port_text = rest[1:] if rest.startswith(":") else ("" if not rest else None)
    else:
        host, _, port_text = raw.rpartition(":") if ":" in raw else (raw, "", "")
    if port_text is None or (port_text and not port_text.isdigit()) or (not port_text and default_port is None):
        msg = f"{raw[:80]!r} has no valid port"
        raise TargetError(msg)
    port = int(port_text) if port_text else int(default_port or 0)
    if not 0 < port < 65536:
        msg = f"port {port} is out of range"
        raise TargetError(msg)
    host = host.lower().rstrip(".")
    ip = _canonical_ip(host)
    if ip is not None:
        return Target(ip, port, ip=True)
    if not _NAME.match(host):
        msg = f"{host[:80]!r} is not a valid host name"
        raise TargetError(msg)
    return Target(host, port)


def special(address: str) -> bool:
    """Whether an address is loopback, link-local, private or otherwise not a public unicast address."""
    addr = ipaddress.ip_address(address)
    return any(addr in net for net in _SPECIAL if net.version == addr.version)


@dataclass
class AllowList:
    """What one grant opens: host names (`*.example.org` for subdomains), each with an optional port, and the
    non-public addresses a person named in config (reached only when the grant opens them too)."""

    hosts: set[tuple[str, int | None]] = field(default_factory=set)
    addresses: set[tuple[str, int | None]] = field(default_factory=set)

    @classmethod
    def of(cls, entries: Iterable[str], addresses: Iterable[str] = ()) -> AllowList:
        """Entries like `pypi.org`, `pypi.org:443`, `*.crates.io`, `127.0.0.1:8000`; raise TargetError on a bad one."""
        return cls(_entries(entries), _entries(addresses))

    def admits(self, target: Target) -> bool:
        return _matches(self.hosts, target)

    def names_address(self, target: Target) -> bool:
        """A non-public address is reached only when a person named that very address (and its port) in config."""
        return target.ip and any(h == target.host and p in (None, target.port) for h, p in self.addresses)


def _entries(entries: Iterable[str]) -> set[tuple[str, int | None]]:
    out: set[tuple[str, int | None]] = set()
    for entry in entries:
        wild = entry.startswith("*.")
        bare = entry[2:] if wild else entry
        has_port = ":" in bare.rsplit("]", 1)[-1]
        t = parse_target(bare if has_port else bare + ":1")
        if wild and t.ip:
            msg = f"{entry}: a wildcard needs a host name, not an address"
            raise TargetError(msg)
        out.add((("*." if wild else "") + t.host, t.port if has_port else None))
    return out


def _matches(entries: set[tuple[str, int | None]], target: Target) -> bool:
    for host, port in entries:
        if port is not None and port != target.port:
            continue
        if host == target.host or (host.startswith("*.") and not target.ip and target.host.endswith(host[1:])):
            return True
    return False


def system_resolve(host: str, port: int) -> list[str]:
    """Every address the host's resolver gives for `host` (TCP)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str
    address: str = ""
    """The one resolved address to connect to (allowed only)."""


def decide(target: Target, allow: AllowList, resolve: Resolver = system_resolve) -> Decision:
    """Allowed only when the grant names the target and every address it resolves to is public (or named)."""
    if not allow.admits(target):
        return Decision(False, f"{target.host}:{target.port} is not on this command's allowlist")
    if target.ip:
        if special(target.host) and not allow.names_address(target):
            return Decision(False, f"{target.host} is a loopback, link-local or private address")
        return Decision(True, "named address", target.host)
    try:
        addresses = resolve(target.host, target.port)
    except (OSError, UnicodeError) as e:
        return Decision(False, f"{target.host} does not resolve ({e})")
    if not addresses:
        return Decision(False, f"{target.host} does not resolve")
    bad = [a for a in addresses if special(a.split("%", 1)[0])]
    if bad:
        return Decision(False, f"{target.host} resolves to {bad[0]}, a loopback, link-local or private address; "
                               "name the address itself in [network] allow to reach it")
    return Decision(True, "allowed host", addresses[0])
