"""`tether sandbox build --packages` on the real engine, with no internet: a .deb built here with dpkg-deb, a flat
apt repository served on host loopback, and a base image whose apt sources (deb822) point at it.

apt-get runs in network `none` and reaches the repository only through the egress proxy, opened to the hosts of
the image's own apt sources once the address is named in the test's config (`[network] addresses`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.sandbox.egress_index import LocalIndex
from tether.runtime.cli.app import app
from tether.sandbox.images import build_dockerfile

pytestmark = pytest.mark.docker
PACKAGE = "hello-tether"
PAYLOAD = "hello from a package built for the egress test\n"


def _deb(repo: Path) -> Path:
    root = repo.parent / "pkgroot"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "usr/share" / PACKAGE).mkdir(parents=True)
    (root / "usr/share" / PACKAGE / "hello.txt").write_text(PAYLOAD)
    (root / "DEBIAN" / "control").write_text(
        f"Package: {PACKAGE}\nVersion: 1.0-1\nArchitecture: all\nMaintainer: Tether Test <t@tether.local>\n"
        "Description: a file for the --packages test\n")
    deb = repo / f"{PACKAGE}_1.0-1_all.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", str(root), str(deb)], check=True,
                   capture_output=True, timeout=60)
    return deb


def _flat_repo(repo: Path) -> None:
    """A flat repository (`deb URI ./`): a Packages file and an unsigned Release naming its hashes."""
    deb = _deb(repo)
    control = subprocess.run(["dpkg-deb", "-f", str(deb)], check=True, capture_output=True, text=True,
                             timeout=60).stdout.strip()
    data = deb.read_bytes()
    packages = (f"{control}\nFilename: ./{deb.name}\nSize: {len(data)}\n"
                f"SHA256: {hashlib.sha256(data).hexdigest()}\n\n").encode()
    (repo / "Packages").write_bytes(packages)
    (repo / "Release").write_text(
        "Origin: tether-test\nLabel: tether-test\nSuite: ./\nDate: Tue, 01 Dec 2026 00:00:00 UTC\nSHA256:\n"
        f" {hashlib.sha256(packages).hexdigest()} {len(packages)} Packages\n")


@pytest.fixture(scope="module")
def apt_repo(tmp_path_factory, debian_image, docker_client):
    """(index on 127.0.0.1, base image tag whose only apt source is that index)."""
    tmp = tmp_path_factory.mktemp("apt")
    repo = tmp / "srv"
    repo.mkdir()
    _flat_repo(repo)
    index = LocalIndex(repo)
    ctx = tmp / "base"
    ctx.mkdir()
    (ctx / "local.sources").write_text(
        f"# the test's repository\nTypes: deb\nURIs: http://{index.host}/\nSuites: ./\nTrusted: yes\n\n"
        "Types: deb\nEnabled: no\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\n")
    (ctx / "Dockerfile").write_text(
        f"FROM {debian_image}\nUSER 0\nRUN : > /etc/apt/sources.list\n"
        "COPY local.sources /etc/apt/sources.list.d/local.sources\nUSER 1000:1000\n")
    base = f"tether-test/apt-base:{index.port}"
    build_dockerfile(docker_client, ctx, base)  # offline: the engine's builder, network none
    yield index, base
    index.close()
    with contextlib.suppress(Exception):
        docker_client.images.remove(base, force=True)


def _build(tmp_path: Path, *args: str, addresses: list[str] | None = None, **extra: str):
    env = {"TETHER_NETWORK__ADDRESSES": json.dumps(addresses or []), **extra}
    result = CliRunner().invoke(app, ["sandbox", "build", *args, "--home", str(tmp_path / "home")], env=env)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def test_network_packages_install_through_the_proxy_from_the_images_apt_sources(tmp_path, apt_repo,
                                                                                  docker_client):
    index, base = apt_repo
    tag = f"tether-test/with-packages:{index.port}"
    try:
        result = _build(tmp_path, "--packages", PACKAGE, "--base", base, "--tag", tag, "--json",
                        addresses=[index.host])
        assert result.exit_code == 0, result.stderr
        report = json.loads(result.stdout)
        assert report["hosts"] == [index.host] and report["packages"] == [PACKAGE] and not report["refused"]
        assert f"/./{PACKAGE}_1.0-1_all.deb" in index.hits and "/./Packages" in index.hits
        record = json.loads(Path(report["record"]).read_text())
        assert record["hosts"] == [index.host] and record["connections"]
        assert all(c["allowed"] and c["host"] == "127.0.0.1" and c["port"] == index.port
                   for c in record["connections"])
        out = docker_client.containers.run(tag, ["cat", f"/usr/share/{PACKAGE}/hello.txt"], network_mode="none",
                                           remove=True)
        assert out.decode() == PAYLOAD
        config = docker_client.images.get(tag).attrs["Config"]
        assert config["User"] == "1000:1000" and config["WorkingDir"] == "/home/tether/workspace"
        assert config["Cmd"] == ["sleep", "infinity"] and PACKAGE in config["Labels"]["tether.extra-packages"]
        assert config["Labels"]["tether.sandbox"] == ""  # the step's owner labels are not the image's
        again = _build(tmp_path, "--packages", f"{PACKAGE}=1.0-1", "--base", base, "--tag", tag,
                       addresses=[index.host])
        assert again.exit_code == 0 and f"the proxy was open to {index.host}" in again.stdout, again.stderr
        assert f'`[sandbox] image = "{tag}"`' in again.stderr
        lists = docker_client.containers.run(tag, ["sh", "-c", "ls /var/lib/apt/lists | grep -c Packages || true"],
                                             network_mode="none", remove=True)
        assert lists.strip() == b"0"
    finally:
        with contextlib.suppress(Exception):
            docker_client.images.remove(tag, force=True)


def test_network_packages_without_the_flag_or_the_address_named_fail_with_one_line(tmp_path, apt_repo):
    index, base = apt_repo
    before = len(index.hits)
    no_flag = _build(tmp_path, PACKAGE, "--base", base, "--tag", "tether-test/never:1", addresses=[index.host])
    assert no_flag.exit_code == 2 and "--packages" in no_flag.stderr
    not_named = _build(tmp_path, "--packages", PACKAGE, "--base", base, "--tag", "tether-test/never:1")
    assert not_named.exit_code == 2, not_named.stderr
    assert index.host in not_named.stderr and "[network] addresses" in not_named.stderr
    assert [line for line in not_named.stderr.splitlines() if line.startswith("error:")] == \
        [not_named.stderr.strip().splitlines()[-1]]
    assert len(index.hits) == before  # refused before anything ran


def test_network_packages_a_source_the_proxy_refuses_fails_with_the_host_named(tmp_path, apt_repo, docker_client):
    """A source named `localhost`: on the list (it is the image's own source) but it resolves to loopback, which
    only an address a person names may reach; the proxy refuses it and the line says which host and why."""
    index, base = apt_repo
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    (ctx / "Dockerfile").write_text(
        f"FROM {base}\nUSER 0\nRUN sed -i 's/127.0.0.1/localhost/' /etc/apt/sources.list.d/local.sources\n")
    by_name = f"tether-test/apt-by-name:{index.port}"
    build_dockerfile(docker_client, ctx, by_name)
    before = len(index.hits)
    try:
        result = _build(tmp_path, "--packages", PACKAGE, "--base", by_name, "--tag", "tether-test/never:1",
                        addresses=[index.host])
        assert result.exit_code == 2, result.stderr
        [line] = [x for x in result.stderr.splitlines() if x.startswith("error:")]
        assert f"refused localhost:{index.port}" in line and "resolves to" in line, line
        assert len(index.hits) == before
        assert not docker_client.images.list(name="tether-test/never")
    finally:
        with contextlib.suppress(Exception):
            docker_client.images.remove(by_name, force=True)


def test_network_packages_missing_base_image_is_named_never_pulled(tmp_path, docker_client):
    result = _build(tmp_path, "--packages", PACKAGE, "--base", "tether-test/absent-base:1")
    assert result.exit_code == 2 and "tether-test/absent-base:1 is not present locally" in result.stderr
    assert "never pulled" in result.stderr and result.stderr.strip().splitlines()[-1].startswith("error:")
    assert sum(line.startswith("error:") for line in result.stderr.splitlines()) == 1


def test_network_packages_refused_without_apt_or_with_the_network_off(tmp_path, tiny_image):
    no_apt = _build(tmp_path, "--packages", PACKAGE, "--base", tiny_image, "--tag", "tether-test/never:1")
    assert no_apt.exit_code == 2 and f"{tiny_image} has no /etc/apt" in no_apt.stderr, no_apt.stderr
    off = _build(tmp_path, "--packages", PACKAGE, "--base", tiny_image, TETHER_NETWORK__MODE="off")
    assert off.exit_code == 2 and "the network is off" in off.stderr, off.stderr


@pytest.mark.parametrize("name", ["Hello", "-oAPT::Get::Foo=1", "a", "pkg;rm", "pkg:amd64", "pkg/bookworm",
                                  "pkg=abc", "../x", "pkg=1.0=2", "pk*", "$(id)", "pkg=1.0-"])
def test_network_packages_names_outside_debian_policy_are_refused(tmp_path, name):
    result = _build(tmp_path, "--packages", name, "--base", "tether-test/absent-base:1")
    assert result.exit_code == 2 and "is not a Debian package name" in result.stderr, result.stderr


def test_network_packages_names_debian_policy_allows():
    from tether.sandbox.packages import parse_names

    names = ["g++", "python3.11", "libssl3=3.0.11-1~deb12u2", "lib+x=1:2.3", "curl,jq", "zlib1g=1:1.2.13.dfsg-1"]
    assert parse_names(names) == ["g++", "python3.11", "libssl3=3.0.11-1~deb12u2", "lib+x=1:2.3", "curl", "jq",
                                  "zlib1g=1:1.2.13.dfsg-1"]
