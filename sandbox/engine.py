"""Reaching the Docker engine: the lazy SDK import and a checked client.

Parts: `docker_sdk()` imports the docker SDK with an install hint, `connect()`
returns a pinged client or raises EngineUnavailableError naming the fix,
`socket_problem()` explains a local socket that cannot be used.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import TYPE_CHECKING, Any

from tether.sandbox.errors import EngineUnavailableError

if TYPE_CHECKING:
    import docker

DEFAULT_SOCKET = "/var/run/docker.sock"
API_TIMEOUT_S = 30


def docker_sdk() -> ModuleType:
    """Import the docker SDK only when a sandbox is really used (it is slow to import)."""
    try:
        import docker
    except ImportError as e:
        msg = "the docker SDK is not installed; run `pip install 'docker>=7.1'`"
        raise EngineUnavailableError(msg) from e
    return docker


def socket_path(docker_host: str | None) -> str | None:
    """The local socket the client will use, or None when the engine is remote."""
    host = docker_host or os.environ.get("DOCKER_HOST")  # docker's own convention
    if not host:
        return DEFAULT_SOCKET
    if host.startswith("unix://"):
        return host[len("unix://"):]
    return None


def socket_problem(docker_host: str | None) -> str | None:
    """Why the local socket cannot be used, with the fix; None when it looks fine."""
    path = socket_path(docker_host)
    if path is None:
        return None
    if not os.path.exists(path):
        return (
            f"no Docker socket at {path}; start the engine "
            "(`sudo systemctl start docker`, or `bash scripts/bootstrap.sh`)"
        )
    if not os.access(path, os.R_OK | os.W_OK):
        return (
            f"no permission on {path}; run `sudo usermod -aG docker $USER` "
            "and log in again (or use sudo)"
        )
    return None


def connect(docker_host: str | None = None, timeout: int = API_TIMEOUT_S) -> docker.DockerClient:
    """A docker client whose engine answered a ping.

    Raises:
        EngineUnavailableError: SDK missing, socket absent or forbidden, engine down.
    """
    sdk = docker_sdk()
    problem = socket_problem(docker_host)
    if problem:
        raise EngineUnavailableError(problem)
    try:
        if docker_host:
            client = sdk.DockerClient(base_url=docker_host, timeout=timeout)
        else:
            client = sdk.from_env(timeout=timeout)
        client.ping()
    except sdk.errors.DockerException as e:
        msg = (
            f"Docker engine not reachable ({_first_line(e)}); start it "
            "(`sudo systemctl start docker` or `bash scripts/bootstrap.sh`)"
        )
        raise EngineUnavailableError(msg) from e
    except OSError as e:
        msg = f"Docker engine not reachable ({e}); check DOCKER_HOST / sandbox.docker_host"
        raise EngineUnavailableError(msg) from e
    return client


def _first_line(e: Any) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
