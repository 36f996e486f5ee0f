"""The networked builder's steps on the real engine: nothing a RUN step starts outlives it, and the image keeps
the build's config (USER, WORKDIR, CMD, ENTRYPOINT), not the step container's, nor its owner labels."""

from __future__ import annotations

import contextlib

import pytest

from tests.sandbox.egress_index import LocalIndex
from tether.sandbox.build_steps import build
from tether.sandbox.network import SandboxNetwork

pytestmark = pytest.mark.docker

LEAK = """import socket, sys, time
mark, tries = sys.argv[1], int(sys.argv[2])
for _ in range(tries):
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect("/run/tether-egress/proxy.sock")
        s.sendall(("GET http://%s/%s HTTP/1.0\\r\\n\\r\\n" % (sys.argv[3], mark)).encode())
        s.recv(100)
        s.close()
    except OSError:
        pass
    time.sleep(0.1)
"""


def _build(docker_client, tmp_path, dockerfile: str, tag: str, hosts_of, addresses=()):
    ctx = tmp_path / "ctx"
    ctx.mkdir(exist_ok=True)
    (ctx / "leak.py").write_text(LEAK)
    (ctx / "Dockerfile").write_text(dockerfile)
    network = SandboxNetwork(addresses=addresses)
    try:
        return build(docker_client, ctx, tag, network, hosts_of)
    finally:
        network.close()


def test_network_build_step_background_process_is_gone_before_the_next_steps_grant(tmp_path, docker_client,
                                                                                     debian_image):
    """Step 2 starts a detached process that keeps knocking on the proxy socket; step 3 holds a grant open to the
    index for 3 s. The knocks reach the index only while their own step runs (the control, step 1), never during
    step 3: step 2's container was stopped and removed before step 3 began."""
    srv = tmp_path / "srv"
    srv.mkdir()
    for mark in ("control", "leak"):
        (srv / mark).write_text(mark)
    index = LocalIndex(srv)
    tag = f"tether-test/steps:{index.port}"
    seen: list[list[str]] = []

    def hosts_of(line: str) -> list[str]:
        seen.append([c.status for c in docker_client.containers.list(all=True,
                                                                     filters={"label": f"tether.run=build-{tag}"})])
        return [index.host]

    dockerfile = (f"FROM {debian_image}\nUSER 0\nCOPY leak.py /leak.py\n"
                  f"RUN python3 /leak.py control 1 {index.host}\n"
                  f"RUN setsid nohup python3 /leak.py leak 300 {index.host} >/dev/null 2>&1 < /dev/null &\n"
                  "RUN sleep 3\nUSER 1000:1000\n")
    try:
        _build(docker_client, tmp_path, dockerfile, tag, hosts_of, addresses=[index.host])
        assert "/control" in index.hits  # a knock from a live step gets through
        assert "/leak" not in index.hits, index.hits
        assert seen == [[], [], []]  # no container of an earlier step, running or stopped, when a RUN starts
    finally:
        index.close()
        with contextlib.suppress(Exception):
            docker_client.images.remove(tag, force=True)


@pytest.mark.parametrize(("lines", "cmd", "entrypoint", "user", "workdir"), [
    ("RUN true\n", ["sleep", "infinity"], None, "1000:1000", "/home/tether/workspace"),
    ('ENTRYPOINT ["/bin/echo"]\nRUN true\n', None, ["/bin/echo"], "1000:1000", "/home/tether/workspace"),
    ('CMD ["hi"]\nUSER 0\nRUN true\nWORKDIR /opt\nRUN true\n', ["hi"], None, "0", "/opt"),
    ("CMD []\nRUN true\n", ["/bin/sh"], None, "1000:1000", "/home/tether/workspace"),
])
def test_network_build_image_keeps_the_builds_config_not_the_steps(tmp_path, docker_client, debian_image, lines,
                                                                    cmd, entrypoint, user, workdir):
    tag = "tether-test/steps-config:1"
    try:
        _build(docker_client, tmp_path, f"FROM {debian_image}\n{lines}", tag, lambda line: [])
        config = docker_client.images.get(tag).attrs["Config"]
        assert (config["Cmd"], config["Entrypoint"] or None) == (cmd, entrypoint)
        assert (config["User"], config["WorkingDir"]) == (user, workdir)
        assert config["Labels"]["tether.sandbox"] == "" and config["Labels"]["tether.pid"] == ""
        assert config["Labels"]["tether.image"] == "1"  # the base's own labels stay
    finally:
        with contextlib.suppress(Exception):
            docker_client.images.remove(tag, force=True)
