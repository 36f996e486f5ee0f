"""The hosts `tether sandbox build --packages` opens are read from the image's apt sources, in both formats apt
reads; anything the proxy cannot carry is named, never guessed."""

from __future__ import annotations

from tether.sandbox.apt_sources import from_files

ONE_LINE = b"""# main archive
deb http://deb.debian.org/debian bookworm main
deb [trusted=yes arch=amd64] https://127.0.0.1:8080/repo ./   # a local one
deb-src http://deb.debian.org/debian bookworm main
deb file:/srv/local ./
#deb http://commented.example/ x
"""
DEB822 = b"""Types: deb deb-src
URIs: http://security.debian.org/debian-security
  https://[::1]:9/x
Suites: bookworm-security
Components: main

# switched off
Types: deb
Enabled: no
URIs: http://off.example/

Types: deb
uris: HTTPS://Mirror.Example:8443/debian
Suites: bookworm
"""


def test_network_apt_sources_one_line_and_deb822_hosts():
    found = from_files({"sources.list": ONE_LINE, "sources.list.d/sec.sources": DEB822,
                        "sources.list.d/extra.list": b"deb http://extra.example/debian ./\n",
                        "sources.list.d/ignored.txt": b"deb http://ignored.example/ x\n",
                        "sources.list.d/old.list.save": b"deb http://saved.example/ x\n"})
    assert found.hosts == ["deb.debian.org:80", "127.0.0.1:8080", "extra.example:80", "security.debian.org:80",
                           "[::1]:9", "mirror.example:8443"]
    assert found.unreadable == []


def test_network_apt_sources_the_proxy_cannot_carry_are_named():
    found = from_files({"sources.list": b"deb mirror+http://m.example/list bookworm main\n"
                                        b"deb ftp://ftp.example/debian bookworm main\n"
                                        b"deb http://user:pw@creds.example/ x\n"
                                        b"deb [broken http://x.example/ y\n"})
    assert found.hosts == []
    assert [u.split(" ", 1)[0] for u in found.unreadable] == [
        "mirror+http://m.example/list", "ftp://ftp.example/debian", "http://user:pw@creds.example/", "deb"]
