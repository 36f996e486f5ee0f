"""Which hosts a command line needs (guardian.network_hosts): installs, fetches, clones, downloads."""

from __future__ import annotations

import pytest

from tether.guardian.network_hosts import PYPI, NetworkDefaults, host_of, network_needs


@pytest.mark.parametrize(("command", "hosts"), [
    ("pip install requests", set(PYPI)),
    ("pip3 download x", set(PYPI)),
    ("python3 -m pip install --index-url http://127.0.0.1:8000/simple pkg", {"127.0.0.1:8000"}),
    ("pip install -i https://idx.example.org/simple pkg", {"idx.example.org:443"}),
    ("pip install --index-url=https://idx.example.org/simple pkg", {"idx.example.org:443"}),
    ("pip install --extra-index-url https://extra.example.org/simple x", {"extra.example.org:443", *PYPI}),
    ("PIP_INDEX_URL=https://my.example.org/simple pip install x", {"my.example.org:443"}),
    ("cd sub && sudo -u bob env A=1 timeout 30 pip install y", set(PYPI)),
    ("uv pip install x", set(PYPI)),
    ("pip install https://files.example.org/x-1.0.whl", {"files.example.org:443", *PYPI}),
    ("npm install left-pad", {"registry.npmjs.org:443"}),
    ("npm ci --registry=https://npm.example.org/", {"npm.example.org:443"}),
    ("npm_config_registry=http://127.0.0.1:4873 npm install", {"127.0.0.1:4873"}),
    ("yarn add x", {"registry.yarnpkg.com:443", "registry.npmjs.org:443"}),
    ("pnpm install", {"registry.npmjs.org:443"}),
    ("cargo fetch", {"index.crates.io:443", "static.crates.io:443", "crates.io:443"}),
    ("go mod download", {"proxy.golang.org:443", "sum.golang.org:443"}),
    ("go get example.org/x@v1", {"proxy.golang.org:443", "sum.golang.org:443"}),
    ("gem install rake", {"rubygems.org:443", "index.rubygems.org:443"}),
    ("git clone https://github.com/a/b", {"github.com:443"}),
    ("git clone -q http://127.0.0.1:9/r.git dest", {"127.0.0.1:9"}),
    ("curl -sSLo out.tgz https://example.org/x.tgz", {"example.org:443"}),
    ("curl example.org", {"example.org:80"}),
    ("wget -q -O out https://example.org:8443/f", {"example.org:8443"}),
    ("ls; curl -s https://a.example.org/ | tee x", {"a.example.org:443"}),
])
def test_network_hosts_of_a_line(command, hosts):
    need = network_needs(command)
    assert need is not None and set(need.hosts) == hosts and not need.unknown


@pytest.mark.parametrize("command", ["ls -la", "echo pip install x", "cargo build", "git status", "git remote add o u",
                                     "pip install --no-index -f ./wheels x", "pip list", "npm test", "go build ./...",
                                     "curl --version", "python3 -m pytest"])
def test_network_not_needed(command):
    assert network_needs(command) is None


def test_network_configured_index_and_registry_replace_the_public_defaults():
    d = NetworkDefaults(pip_index_url="http://127.0.0.1:8000/simple", npm_registry="https://npm.example.org/")
    assert network_needs("pip install x", d).hosts == ["127.0.0.1:8000"]
    assert network_needs("npm install", d).hosts == ["npm.example.org:443"]
    assert network_needs("pip install -i https://other.example.org/s x", d).hosts == ["other.example.org:443"]


def test_network_unreadable_urls_and_unproxied_remotes():
    assert network_needs("curl -s $URL").unknown
    assert network_needs("git pull").unknown  # the remote is not in the line
    need = network_needs("git clone git@github.com:a/b")
    assert need.hosts == [] and need.unproxied == ["git@github.com:a/b"]
    assert network_needs("pip install 'unbalanced") is None


def test_network_host_of_urls():
    assert host_of("https://pypi.org/simple") == "pypi.org:443"
    assert host_of("http://[::1]:8080/x") == "[::1]:8080"
    assert host_of("ftp://x.org/") is None and host_of("http://:80/") is None and host_of("http://x:99999/") is None
