"""A sandbox's way out, when one is granted: the egress folder, its proxy, and the command wrapper.

`SandboxNetwork` makes a host folder (mounted read-only at `EGRESS_MOUNT`)
holding the forwarder script and, while a grant is open, the proxy's socket.
`grant(hosts)` opens the proxy for those hosts for one command; `wrap(argv)`
runs that command under the forwarder, which sets the proxy variables. The
container itself keeps network mode `none`.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from tether.sandbox.egress import SOCKET_NAME, ConnectionRecord, Connector, EgressLimits, EgressProxy, direct_connect
from tether.sandbox.egress_rules import AllowList, Resolver, TargetError, special, system_resolve
from tether.sandbox.errors import SandboxError

EGRESS_MOUNT = "/run/tether-egress"
FORWARDER = Path(__file__).with_name("egress_forward.py")
LOCAL_NAMES = "localhost,127.0.0.1,::1"
"""NO_PROXY for commands: their own loopback servers are reached directly, unless host loopback is granted."""


class SandboxNetwork:
    """The egress proxy of one sandbox; nothing listens until `grant()`."""

    def __init__(self, limits: EgressLimits | None = None, *, addresses: Iterable[str] = (),
                 resolve: Resolver = system_resolve, connector: Connector = direct_connect) -> None:
        """`addresses`: the loopback, link-local or private addresses a person named in config (a local index);
        a grant reaches such an address only when it is one of these."""
        self.addresses = list(addresses)
        self.folder = Path(tempfile.mkdtemp(prefix="tether-egress-"))
        self.folder.chmod(0o711)  # the sandbox user reaches the files by name; nobody lists the folder
        shutil.copyfile(FORWARDER, self.folder / "forward.py")
        (self.folder / "forward.py").chmod(0o644)
        self.proxy = EgressProxy(self.folder, limits, resolve=resolve, connector=connector)
        self._allow: AllowList | None = None

    def volume(self) -> dict[str, dict[str, str]]:
        """The docker volume entry that mounts the egress folder read-only."""
        return {str(self.folder): {"bind": EGRESS_MOUNT, "mode": "ro"}}

    @property
    def granted(self) -> bool:
        return self._allow is not None

    @contextlib.contextmanager
    def grant(self, hosts: Iterable[str]) -> Iterator[list[ConnectionRecord]]:
        """Open the proxy for `hosts` (entries like `pypi.org`, `127.0.0.1:8000`) while the block runs."""
        try:
            allow = AllowList.of(hosts, self.addresses)
        except TargetError as e:
            msg = f"cannot open the network for {e}; name hosts like `pypi.org` or `127.0.0.1:8000`"
            raise SandboxError(msg) from e
        with self.proxy.grant(allow) as records:
            self._allow = allow
            try:
                yield records
            finally:
                self._allow = None

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv` under the forwarder, when a grant is open; as is otherwise."""
        if self._allow is None:
            return argv
        loopback = any(not h.startswith("*.") and _is_special(h) for h, _ in self._allow.hosts)
        no_proxy = "localhost" if loopback else LOCAL_NAMES
        return ["python3", "-S", f"{EGRESS_MOUNT}/forward.py", f"{EGRESS_MOUNT}/{SOCKET_NAME}", no_proxy, "--", *argv]

    def close(self) -> None:
        self.proxy.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def _is_special(host: str) -> bool:
    try:
        return special(host)
    except ValueError:
        return False  # a name
