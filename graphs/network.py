"""Network as a permission per command: the ask that names the hosts, and the run inside the grant.

`NetworkRules` is what the runner hands the graph (mode, the hosts a person
always allows, the configured index and registry). `network_verdict()` adds
to the guardian's verdict: a command that needs the network (guardian's
`network_needs`) asks, naming the hosts it opens, unless every host is always
allowed; with the network off it is denied. `run_granted()` runs an approved
command with the egress proxy open to exactly those hosts and journals every
connection it made or was refused (where no way out can be opened, e.g. an
image without python3, the command runs without one and its output says so).
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from tether.common.events import EgressConnection
from tether.guardian.network_hosts import NetworkDefaults, network_needs
from tether.guardian.verdict import RuleHit, Verdict, strictest
from tether.sandbox.base import ExecResult
from tether.sandbox.egress_rules import TargetError, parse_target, special
from tether.sandbox.errors import SandboxError

if TYPE_CHECKING:
    from tether.graphs.context import RunContext

NetworkMode = Literal["ask", "off"]
CATEGORY = "network-access"


@dataclass(frozen=True)
class NetworkRules:
    """How commands reach the network in this run."""

    mode: NetworkMode = "ask"
    """`ask`: a command that needs the network asks for its hosts; `off`: such commands are denied."""
    allow: tuple[str, ...] = ()
    """Hosts a person always allows (`[network] allow`): opened to every network command without an ask."""
    addresses: tuple[str, ...] = ()
    """Loopback, link-local or private addresses a person named in config; a line naming another is denied."""
    defaults: NetworkDefaults = field(default_factory=NetworkDefaults)


def _always(host: str, allow: tuple[str, ...]) -> bool:
    name, _, port = host.rpartition(":")
    for entry in allow:
        e_name, has_port, e_port = entry.rpartition(":") if ":" in entry.rsplit("]", 1)[-1] else (entry, "", "")
        if has_port and e_port != port:
            continue
        if e_name == name or (e_name.startswith("*.") and name.endswith(e_name[1:])):
            return True
    return False


def network_verdict(rules: NetworkRules, command: str, verdict: Verdict) -> tuple[Verdict, list[str] | None]:
    """The verdict with the network's hit added, and the hosts to open (None: the command needs no network)."""
    need = network_needs(command, rules.defaults)
    if need is None:
        return verdict, None
    prog = need.programs[0]
    if rules.mode == "off":
        hit = RuleHit(id="NET-OFF", category=CATEGORY, program=prog, decision="deny",
                      reason="the network is off for this run (`--network off`); work with what is in the workspace")
        return _with(verdict, hit), None
    if need.unproxied and not need.hosts:
        hit = RuleHit(id="NET-011", category=CATEGORY, program=prog, decision="deny",
                      reason=f"{need.unproxied[0]} needs a protocol the egress proxy does not carry (only HTTP and "
                             "HTTPS); use an https:// URL")
        return _with(verdict, hit), None
    closed = [h for h in need.hosts if _non_public(h) and not _always(h, rules.addresses)]
    if closed:
        hit = RuleHit(id="NET-012", category=CATEGORY, program=prog, decision="deny",
                      reason=f"{closed[0]} is a loopback, link-local or private address; only a person opens one, by "
                             "naming it in `[network] addresses` (docs/network.md)")
        return _with(verdict, hit), None
    hosts = sorted(set(need.hosts) | set(rules.allow))
    if need.unknown or not all(_always(h, rules.allow) for h in need.hosts):
        named = ", ".join(need.hosts) or "no host it could name"
        extra = " (a URL in it could not be read, so only the hosts named here are opened)" if need.unknown else ""
        hit = RuleHit(id="NET-010", category=CATEGORY, program=prog, decision="ask",
                      reason=f"opens the network to {named} for this command only{extra}")
        return _with(verdict, hit), hosts
    return verdict, hosts


def _non_public(host: str) -> bool:
    try:
        target = parse_target(host)
    except TargetError:
        return True  # unreadable: closed
    return target.ip and special(target.host)


def _with(verdict: Verdict, hit: RuleHit) -> Verdict:
    reasons = [verdict.reason] if verdict.hits and verdict.reason else []
    return Verdict(decision=strictest(verdict.decision, hit.decision), hits=[*verdict.hits, hit],
                   reason="; ".join([*reasons, f"{hit.id}: {hit.reason}"]), decoded=verdict.decoded)


def run_granted(ctx: RunContext, cmd_id: str, command: str, hosts: list[str]) -> ExecResult:
    """Run `command` with the egress proxy open to `hosts`; journal each connection; name refusals in the output."""
    with ExitStack() as stack:
        try:
            records = stack.enter_context(ctx.sandbox.egress(hosts))
        except SandboxError as e:  # no way out can be opened here: the command runs without one, and is told so
            result = ctx.sandbox.exec(command, cwd=ctx.workspace_mount)
            note = f"\nTETHER: the network could not be opened ({e}); the command ran without one\n"
            return result.model_copy(update={"output": result.output + note})
        result = ctx.sandbox.exec(command, cwd=ctx.workspace_mount)
    refused = []
    for i, r in enumerate(records):
        ctx.journal.append(EgressConnection(
            key=f"egress:{cmd_id}:{i}", cmd_id=cmd_id, method=r.method, host=r.host, port=r.port,
            allowed=r.allowed, reason=r.reason, address=r.address, bytes_up=r.bytes_up, bytes_down=r.bytes_down,
            seconds=r.seconds))
        if not r.allowed:
            refused.append(f"TETHER: the egress proxy refused {r.host}:{r.port}: {r.reason}")
    if refused:
        result = result.model_copy(update={"output": result.output + "\n" + "\n".join(refused[:10]) + "\n"})
    return result
