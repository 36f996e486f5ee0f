"""The egress proxy's rules: targets, IP-literal tricks, non-public addresses, and names that resolve to them."""

from __future__ import annotations

import pytest

from tether.sandbox.egress_rules import AllowList, TargetError, decide, parse_target, special


def _never(host: str, port: int) -> list[str]:  # noqa: ARG001
    msg = f"the proxy resolved {host}: a refusal by rule must come before any lookup"
    raise AssertionError(msg)


@pytest.mark.parametrize("target", [
    "2130706433:80", "0177.0.0.1:80", "0x7f.0.0.1:80", "0x7f000001:80", "127.1:80", "017700000001:80",
    "[::ffff:127.0.0.1]:80", "[::ffff:7f00:1]:80", "[fe80::1%25eth0]:80", "user@pypi.org:443", "pypi.org:0",
    "pypi.org:99999", "pypi.org", "pypi.org:https", "a/b:80", "exa mple.com:80", "", "1.2.3.4.5:80", "-x.com:80",
])
def test_egress_refuses_odd_targets_and_ip_literal_tricks(target):
    with pytest.raises(TargetError):
        parse_target(target)


def test_egress_targets_are_canonical():
    assert parse_target("PyPI.org.:443").host == "pypi.org"
    assert parse_target("[::1]:443").host == "::1"
    assert parse_target("93.184.215.14:443").ip


@pytest.mark.parametrize("address", [
    "127.0.0.1", "127.8.9.10", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
    "100.64.0.1", "0.0.0.0", "0.1.2.3", "::1", "fe80::1", "fc00::1", "fd12::1", "::ffff:10.0.0.1", "224.0.0.1",
    "64:ff9b::a00:1", "2002:a00:1::1",
])
def test_egress_special_addresses(address):
    assert special(address)


def test_egress_public_addresses_are_not_special():
    assert not special("93.184.215.14") and not special("2606:4700::1111")


@pytest.mark.parametrize("target", ["169.254.169.254:80", "10.0.0.1:443", "192.168.0.1:443", "127.0.0.1:8000",
                                    "[::1]:443", "[fd00::1]:443", "100.64.0.1:80"])
def test_egress_refuses_metadata_loopback_and_private_even_when_asked_by_address_without_being_named(target):
    allow = AllowList.of(["pypi.org", "*.example.org"])
    d = decide(parse_target(target), allow, _never)
    assert not d.allowed


def test_egress_an_address_is_reached_only_when_granted_and_named_in_config_with_its_port():
    allow = AllowList.of(["127.0.0.1:8000", "127.0.0.1:8001", "127.0.0.2:8000"], ["127.0.0.1:8000"])
    assert decide(parse_target("127.0.0.1:8000"), allow, _never).address == "127.0.0.1"
    assert not decide(parse_target("127.0.0.1:8000"), AllowList.of(["127.0.0.1:8000"]), _never).allowed
    assert not decide(parse_target("127.0.0.1:8000"), AllowList.of([], ["127.0.0.1:8000"]), _never).allowed
    assert not decide(parse_target("127.0.0.1:8001"), allow, _never).allowed
    assert not decide(parse_target("127.0.0.2:8000"), allow, _never).allowed


def test_egress_a_host_not_on_the_allowlist_is_refused_before_any_lookup():
    d = decide(parse_target("evil.example.com:443"), AllowList.of(["pypi.org"]), _never)
    assert not d.allowed and "not on this command's allowlist" in d.reason


@pytest.mark.parametrize("resolved", [["127.0.0.1"], ["10.0.0.7"], ["169.254.169.254"], ["93.184.215.14", "10.0.0.1"],
                                      ["::1"], ["::ffff:127.0.0.1"]])
def test_egress_dns_trick_a_name_resolving_to_a_private_address_is_refused(resolved):
    """Even when the person named 127.0.0.1 itself: a name is judged by every address it resolves to."""
    allow = AllowList.of(["rebind.example.com", "127.0.0.1:8000"], ["127.0.0.1:8000"])
    d = decide(parse_target("rebind.example.com:8000"), allow, lambda h, p: resolved)
    assert not d.allowed and "resolves to" in d.reason


def test_egress_resolves_once_and_connects_to_that_address():
    calls = []

    def resolve(host, port):
        calls.append(host)
        return ["93.184.215.14"] if len(calls) == 1 else ["127.0.0.1"]  # a rebinding resolver

    d = decide(parse_target("pypi.org:443"), AllowList.of(["pypi.org"]), resolve)
    assert d.allowed and d.address == "93.184.215.14" and calls == ["pypi.org"]


def test_egress_wildcards_ports_and_bad_entries():
    allow = AllowList.of(["*.crates.io", "pypi.org:443"])
    assert allow.admits(parse_target("static.crates.io:443"))
    assert not allow.admits(parse_target("crates.io.evil.com:443"))
    assert not allow.admits(parse_target("evilcrates.io:443"))
    assert not allow.admits(parse_target("pypi.org:80"))
    for bad in ("*.127.0.0.1", "2130706433", "a b", "http://pypi.org"):
        with pytest.raises(TargetError):
            AllowList.of([bad])
