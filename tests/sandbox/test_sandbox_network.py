"""Network through the egress proxy, on the real engine: a package index on host loopback, reached only when granted.

The sandbox keeps network mode `none`. Every server here listens on host
127.0.0.1; addresses off loopback appear only as targets the proxy must refuse
by rule (a spy connector shows it never tried), or as raw connects from a
container that has no route anywhere (nothing is sent).
"""

from __future__ import annotations

import ensurepip
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.sandbox.egress_index import LocalIndex, build_npm, build_wheel
from tether.sandbox.config import DockerSandboxConfig
from tether.sandbox.docker import DockerSandbox
from tether.sandbox.egress import direct_connect
from tether.sandbox.errors import SandboxError
from tether.sandbox.network import SandboxNetwork

pytestmark = pytest.mark.docker

PIP = "python3 pip.whl/pip download --no-deps --disable-pip-version-check --retries 0 --timeout 5 -d dl"
FETCH = ("python3 -c \"import sys, urllib.request as u\n"
         "try:\n    print(u.urlopen(sys.argv[1], timeout=10).read()[:200])\n"
         "except Exception as e:\n    print('FAILED', e); sys.exit(3)\" ")
NO_ROUTE = r"""
import socket, sys
for addr in [("192.0.2.1", 80), ("127.0.0.1", 1)]:
    try:
        socket.create_connection(addr, timeout=3); print("CONNECTED", addr)
    except OSError as e:
        print("no route", addr, e.errno)
try:
    print("RESOLVED", socket.getaddrinfo("pypi.org", 443))
except OSError as e:
    print("no dns", e)
"""


@pytest.fixture
def index(tmp_path):
    srv = tmp_path / "srv"
    srv.mkdir()
    build_wheel(srv)
    idx = LocalIndex(srv)
    build_npm(srv, idx.port)
    repo = srv / "repo.git"
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True, timeout=60)
    work = tmp_path / "src"
    work.mkdir()
    (work / "README").write_text("cloned through the proxy\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@x", "-C", str(work)]
    for args in (["init", "-q"], ["add", "README"], ["commit", "-qm", "one"], ["push", "-q", str(repo), "HEAD:master"]):
        subprocess.run([*git, *args], check=True, timeout=60, capture_output=True)
    subprocess.run(["git", "-C", str(repo), "update-server-info"], check=True, timeout=60)
    yield idx
    idx.close()


@pytest.fixture
def box(tmp_path, debian_image, docker_client, index):
    """A started Debian sandbox with an egress proxy whose connects are recorded; pip's wheel in the workspace."""
    ws = tmp_path / "ws"
    ws.mkdir()
    shutil.copy(next((Path(ensurepip.__file__).parent / "_bundled").glob("pip-*.whl")), ws / "pip.whl")
    connected: list[tuple[str, int]] = []

    def spy(address, timeout):
        connected.append(address)
        return direct_connect(address, timeout)

    sb = DockerSandbox(ws, DockerSandboxConfig(image=debian_image, default_timeout_s=60), client=docker_client,
                       network=SandboxNetwork(addresses=[index.host], connector=spy))
    sb.connected = connected  # type: ignore[attr-defined]
    with sb:
        yield sb


def test_network_approved_pip_download_through_the_proxy_succeeds(box, index):
    with box.egress([index.host]) as records:
        r = box.exec(f"{PIP} --index-url http://{index.host}/simple tetherdemo")
    assert r.exit_code == 0, r.output
    assert (box.workspace / "dl" / "tetherdemo-1.0-py3-none-any.whl").is_file()
    assert "/simple/tetherdemo/" in index.hits
    assert records and all(rec.allowed and rec.host == "127.0.0.1" for rec in records)
    assert sum(rec.bytes_down for rec in records) > 900


def test_network_the_same_pip_command_without_a_grant_fails_and_reaches_nothing(box, index):
    r = box.exec(f"{PIP} --index-url http://{index.host}/simple tetherdemo")
    assert r.exit_code != 0 and not r.timed_out
    assert index.hits == [] and box.connected == []
    assert not (box.workspace / "dl" / "tetherdemo-1.0-py3-none-any.whl").exists()


def test_network_npm_tarball_and_git_clone_through_the_proxy(box, index):
    script = ("import json, urllib.request as u, hashlib\n"
              f"doc = json.load(u.urlopen('http://{index.host}/npm/tether-demo', timeout=10))\n"
              "dist = doc['versions']['1.0.0']['dist']\n"
              "data = u.urlopen(dist['tarball'], timeout=10).read()\n"
              "assert hashlib.sha1(data).hexdigest() == dist['shasum']\n"
              "open('tether-demo.tgz', 'wb').write(data)\n")
    (box.workspace / "npm_fetch.py").write_text(script)
    with box.egress([index.host]):
        npm = box.exec("python3 npm_fetch.py")
        git = box.exec(f"git clone -q http://{index.host}/repo.git cloned && cat cloned/README")
    assert npm.exit_code == 0, npm.output
    assert (box.workspace / "tether-demo.tgz").read_bytes() == (index.folder / "tether-demo-1.0.0.tgz").read_bytes()
    assert git.exit_code == 0 and "cloned through the proxy" in git.output, git.output


@pytest.mark.parametrize("url", ["http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/", "http://192.168.1.1/",
                                 "http://172.16.0.1/", "http://100.64.0.1/", "http://[fd00::1]/",
                                 "http://2130706433/", "http://localhost:{port}/simple/", "http://example.com/",
                                 "https://pypi.org/simple/", "http://127.0.0.1:{other}/"])
def test_network_refusals_from_inside_are_recorded_and_never_connect(box, index, url):
    url = url.format(port=index.port, other=index.port + 1 if index.port < 65535 else index.port - 1)
    with box.egress([index.host]) as records:
        r = box.exec(FETCH + f"'{url}'")
    assert r.exit_code == 3, r.output
    assert box.connected == [] and index.hits == []
    if url.startswith("http://localhost"):  # NO_PROXY: the sandbox's own loopback, where the host's index is not
        return
    assert "403" in r.output, r.output
    assert records and not any(rec.allowed for rec in records) and all(rec.reason for rec in records)


def test_network_no_route_out_without_a_grant_nor_around_the_proxy_with_one(box, index):
    (box.workspace / "no_route.py").write_text(NO_ROUTE)
    for granted in (False, True):
        if granted:
            with box.egress([index.host]):
                r = box.exec("python3 no_route.py; (exec 3<>/dev/tcp/192.0.2.1/80) 2>&1 || echo devtcp-refused")
        else:
            r = box.exec("test -S /run/tether-egress/proxy.sock && echo SOCKET; python3 no_route.py; "
                         "(exec 3<>/dev/tcp/192.0.2.1/80) 2>&1 || echo devtcp-refused")
        assert "CONNECTED" not in r.output and "RESOLVED" not in r.output and "SOCKET" not in r.output, r.output
        assert r.output.count("no route") == 2 and "no dns" in r.output and "devtcp-refused" in r.output
    assert box.connected == [] and index.hits == []
    ifaces = box.exec("cat /proc/net/dev")
    assert [line.split(":")[0].strip() for line in ifaces.output.splitlines()[2:]] == ["lo"]


def test_network_needs_python3_in_the_image_the_tiny_one_says_so(tmp_path, tiny_image, docker_client):
    ws = tmp_path / "ws"
    ws.mkdir()
    with DockerSandbox(ws, DockerSandboxConfig(image=tiny_image), client=docker_client,
                       network=SandboxNetwork()) as sb, pytest.raises(SandboxError, match="python3"), \
            sb.egress(["127.0.0.1:1"]):
        pass


def test_network_a_sandbox_without_a_proxy_refuses_every_grant(tmp_path, tiny_image, docker_client):
    ws = tmp_path / "ws"
    ws.mkdir()
    with DockerSandbox(ws, DockerSandboxConfig(image=tiny_image), client=docker_client) as sb, \
            pytest.raises(SandboxError, match="no network"), sb.egress(["pypi.org"]):
        pass
    assert sb.network is None


@pytest.mark.parametrize(("dockerfile", "why"), [
    ("FROM {tiny}\nRUN true\n", "no python3"),
    ("FROM {debian} AS a\nFROM {debian}\nCOPY --from=a /x /x\n", "one stage"),
    ("FROM {debian}\nONBUILD RUN true\n", "ONBUILD is not supported"),
    ("FROM {debian}\nADD https://example.org/x /x\n", "only files of the build context"),
    ("FROM {debian}\nCOPY ../outside /x\n", "not a file of the build context"),
    ("FROM {debian}\nRUN exit 3\n", "exited 3"),
    ("FROM tether-test/absent:1\nRUN true\n", "not present locally"),
])
def test_network_build_refuses_what_it_cannot_build_safely(tmp_path, docker_client, tiny_image, debian_image,
                                                           dockerfile, why):
    from tether.sandbox.build_steps import build

    (tmp_path / "ctx").mkdir()
    (tmp_path / "outside").write_text("secret")
    (tmp_path / "ctx" / "Dockerfile").write_text(dockerfile.format(tiny=tiny_image, debian=debian_image))
    network = SandboxNetwork()
    try:
        with pytest.raises(SandboxError, match=why):
            build(docker_client, tmp_path / "ctx", "tether-test/refused:1", network, lambda line: [])
    finally:
        network.close()
    assert not docker_client.images.list(name="tether-test/refused")


def test_network_dns_trick_a_granted_name_that_resolves_to_loopback_is_refused(box, index):
    """`localhost` is granted and 127.0.0.1:PORT is a named address, yet the name is refused: names are judged by
    what they resolve to, and a name resolving to a non-public address never passes."""
    with box.egress([index.host, f"localhost:{index.port}"]) as records:
        r = box.exec(f"NO_PROXY= no_proxy= {FETCH}'http://localhost:{index.port}/simple/'")
    assert r.exit_code == 3 and "403" in r.output, r.output
    assert index.hits == [] and box.connected == []
    [rec] = records
    assert rec.host == "localhost" and not rec.allowed and "resolves to" in rec.reason
