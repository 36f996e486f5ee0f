"""Shared fixtures. Docker-backed tests skip locally without an engine, but
FAIL when TETHER_REQUIRE_DOCKER=1 (set by .ci/run), so CI cannot go green
by skipping them."""

from __future__ import annotations

import os
import sys

import pytest

REQUIRE_DOCKER = os.environ.get("TETHER_REQUIRE_DOCKER") == "1"


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    """Let pytest's own clean-up of old temp folders remove the trees past PATH_MAX that tests build.

    It removes them with shutil.rmtree, which recurses once per level (RecursionError past ~1000 levels,
    seen in CI when a later pytest process made the session's folder an old one). Python frames of a
    3.11 recursion cost no C stack, so a higher limit is safe here.
    """
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 100_000))


def docker_unavailable(reason: str) -> None:
    """Skip, or fail when Docker is required."""
    if REQUIRE_DOCKER:
        pytest.fail(f"Docker required (TETHER_REQUIRE_DOCKER=1) but unavailable: {reason}")
    pytest.skip(f"Docker unavailable: {reason}")


@pytest.fixture(scope="session")
def docker_client():
    """A live docker-py client, or skip/fail."""
    try:
        import docker

        client = docker.from_env(timeout=30)
        client.ping()
    except Exception as e:  # any failure means the engine is not usable here
        docker_unavailable(str(e))
    return client


# --- sandbox fixtures (owned by the sandbox area; used by every area's Docker tests) ---


@pytest.fixture(scope="session")
def tiny_image(docker_client) -> str:
    """Tag of the busybox test image `tether-sandbox:tiny`, built (in ~1 s) when missing."""
    from tether.common.errors import ConfigError
    from tether.sandbox.images import build_image

    try:
        return build_image(docker_client, "tiny").tag
    except ConfigError as e:  # host lacks busybox-static / bash-static
        docker_unavailable(str(e))
        raise


@pytest.fixture(scope="session")
def debian_image(docker_client) -> str:
    """Tag of the default Debian image, built like `tether sandbox build` when missing (~70 s once)."""
    from tether.common.errors import ConfigError
    from tether.sandbox.images import build_image

    try:
        return build_image(docker_client, "debian").tag
    except ConfigError as e:  # not root, or debootstrap missing
        docker_unavailable(str(e))
        raise


@pytest.fixture
def sandbox_config(tiny_image):
    """A hardened DockerSandboxConfig on the tiny image (fresh per test; mutate freely)."""
    from tether.sandbox.config import DockerSandboxConfig

    return DockerSandboxConfig(image=tiny_image, default_timeout_s=30)


@pytest.fixture
def make_sandbox(sandbox_config, docker_client):
    """Factory: `make_sandbox(workspace, *, memory_dir=None, run_id=None, **config_overrides)`.

    Returns a started DockerSandbox on the tiny image (pass `image=debian_image`
    to override); every sandbox made is closed at teardown. Running as root, a
    root-owned workspace is lent to uid 1000 until close: create the files the
    sandbox must modify before calling the factory.
    """
    from tether.sandbox.config import DockerSandboxConfig
    from tether.sandbox.docker import DockerSandbox

    made: list[DockerSandbox] = []

    def factory(workspace, *, memory_dir=None, run_id=None, **config_overrides) -> DockerSandbox:
        config = DockerSandboxConfig.model_validate({**sandbox_config.model_dump(), **config_overrides})
        sandbox = DockerSandbox(workspace, config, memory_dir=memory_dir, run_id=run_id, client=docker_client)
        made.append(sandbox)
        return sandbox.start()

    yield factory
    for sandbox in made:
        sandbox.close()
