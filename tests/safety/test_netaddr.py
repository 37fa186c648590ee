"""Address and host classification for web_fetch's destination check: tables of known cases, and properties
over random addresses inside and outside the internal ranges."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mini_agent.safety.netaddr import (
    LINK_LOCAL,
    LOOPBACK,
    METADATA,
    MULTICAST,
    PRIVATE,
    RESERVED,
    SHARED,
    UNSPECIFIED,
    address_risk,
    host_risk,
)


@pytest.mark.parametrize(
    ("ip", "risk"),
    [
        ("127.0.0.1", LOOPBACK),
        ("127.255.0.9", LOOPBACK),
        ("::1", LOOPBACK),
        ("10.0.0.5", PRIVATE),
        ("172.16.0.1", PRIVATE),
        ("172.31.255.255", PRIVATE),
        ("192.168.1.1", PRIVATE),
        ("fd12:3456::1", PRIVATE),
        ("fec0::1", PRIVATE),
        ("169.254.1.1", LINK_LOCAL),
        ("fe80::1", LINK_LOCAL),
        ("fe80::1%eth0", LINK_LOCAL),
        ("169.254.169.254", METADATA),
        ("fd00:ec2::254", METADATA),
        ("100.100.100.200", METADATA),
        ("0.0.0.0", UNSPECIFIED),
        ("0.1.2.3", UNSPECIFIED),
        ("::", UNSPECIFIED),
        ("224.0.0.1", MULTICAST),
        ("239.255.255.250", MULTICAST),
        ("ff02::1", MULTICAST),
        ("100.64.0.1", SHARED),
        ("100.127.255.254", SHARED),
        ("192.0.2.1", RESERVED),
        ("198.18.0.1", RESERVED),
        ("203.0.113.7", RESERVED),
        ("240.0.0.1", RESERVED),
        ("255.255.255.255", RESERVED),
        ("2001:db8::1", RESERVED),
        ("2001::1", RESERVED),  # Teredo
        ("100::1", RESERVED),  # discard-only, outside the global unicast block
        # IPv6 forms that carry an IPv4 address are judged by it
        ("::ffff:127.0.0.1", LOOPBACK),
        ("::ffff:7f00:1", LOOPBACK),
        ("::ffff:169.254.169.254", METADATA),
        ("::ffff:10.1.2.3", PRIVATE),
        ("::127.0.0.1", LOOPBACK),  # IPv4-compatible (deprecated)
        ("64:ff9b::10.0.0.5", PRIVATE),  # NAT64
        ("64:ff9b::169.254.169.254", METADATA),
        ("2002:7f00:1::1", LOOPBACK),  # 6to4 of 127.0.0.1
        ("2002:a9fe:a9fe::", METADATA),
        # public
        ("8.8.8.8", None),
        ("1.1.1.1", None),
        ("93.184.216.34", None),
        ("172.32.0.1", None),
        ("100.128.0.1", None),
        ("2606:4700:4700::1111", None),
        ("2a00:1450:4007:80f::200e", None),
        ("::ffff:8.8.8.8", None),
        ("64:ff9b::8.8.8.8", None),
        ("2002:808:808::1", None),
    ],
)
def test_address_risk(ip, risk):
    assert address_risk(ip) == risk


@pytest.mark.parametrize("text", ["", "example.com", "127.1", "1.2.3.4.5", "::g", "not an address"])
def test_what_is_not_an_address_is_flagged_not_passed(text):
    assert address_risk(text) == "an unrecognised address"


@pytest.mark.parametrize(
    ("host", "risk"),
    [
        ("127.0.0.1", LOOPBACK),
        ("127.1", LOOPBACK),
        ("127.0.1", LOOPBACK),
        ("2130706433", LOOPBACK),
        ("0x7f000001", LOOPBACK),
        ("0x7f.0.0.1", LOOPBACK),
        ("0177.0.0.1", LOOPBACK),
        ("017700000001", LOOPBACK),
        ("127.0.0.1.", LOOPBACK),
        ("[::1]", LOOPBACK),
        ("::1", LOOPBACK),
        ("[::ffff:127.0.0.1]", LOOPBACK),
        ("[fe80::1%25eth0]", LINK_LOCAL),
        ("localhost", LOOPBACK),
        ("LocalHost.", LOOPBACK),
        ("api.localhost", LOOPBACK),
        ("metadata.google.internal", METADATA),
        ("METADATA.GOOGLE.INTERNAL.", METADATA),
        ("169.254.169.254", METADATA),
        ("0251.0376.0251.0376", METADATA),
        ("0", UNSPECIFIED),
        ("0.0.0.0", UNSPECIFIED),
        ("10.1", PRIVATE),
        ("192.168.1", PRIVATE),
        ("3232235777", PRIVATE),
        # ordinary names and public literals
        ("example.com", None),
        ("localhost.example.com", None),
        ("mylocalhost", None),
        ("8.8.8.8", None),
        ("134744072", None),
        ("1.2.3.4.5", None),
        ("08.0.0.1", None),  # not octal: a name, left to resolution
        ("0x1g.0.0.1", None),
        ("256.0.0.1", None),
        ("1.2.3.256", None),
        ("1.2.65536", None),
        ("4294967296", None),
        ("", None),
    ],
)
def test_host_risk(host, risk):
    assert host_risk(host) == risk


IPV4_INTERNAL = [IPv4Network(network) for network in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "127.0.0.0/8")]
IPV4_INTERNAL += [IPv4Network(network) for network in ("169.254.0.0/16", "100.64.0.0/10", "0.0.0.0/8", "224.0.0.0/4")]
IPV6_INTERNAL = [IPv6Network(network) for network in ("fc00::/7", "fe80::/10", "ff00::/8", "fec0::/10")]


def addresses_in(networks: list) -> st.SearchStrategy:
    return st.sampled_from(networks).flatmap(
        lambda network: st.integers(0, network.num_addresses - 1).map(lambda offset: network[offset])
    )


PUBLIC_FIRST_OCTETS = [octet for octet in range(1, 224) if octet not in (10, 100, 127, 169, 172, 192, 198, 203)]
public_ipv4 = st.builds(
    lambda first, rest: IPv4Address((first << 24) | rest),
    st.sampled_from(PUBLIC_FIRST_OCTETS),
    st.integers(0, (1 << 24) - 1),
).filter(lambda address: str(address) != "168.63.129.16")
public_ipv6 = st.builds(
    lambda first, rest: IPv6Address((first << 112) | rest),
    st.integers(0x2400, 0x2FFF),  # the regional registries' blocks inside 2000::/3
    st.integers(0, (1 << 112) - 1),
)


@given(address=addresses_in(IPV4_INTERNAL))
def test_internal_ipv4_addresses_are_flagged_in_every_form(address):
    assert address_risk(str(address)) is not None
    assert address_risk(f"::ffff:{address}") == address_risk(str(address))
    assert address_risk(str(IPv6Address((0x2002 << 112) | (int(address) << 80)))) == address_risk(str(address))
    assert host_risk(str(int(address))) == host_risk(hex(int(address))) == address_risk(str(address))


@given(address=addresses_in(IPV6_INTERNAL))
def test_internal_ipv6_addresses_are_flagged(address):
    assert address_risk(str(address)) is not None
    assert host_risk(f"[{address}]") == address_risk(str(address))


@given(address=public_ipv4)
def test_public_ipv4_addresses_pass_in_every_form(address):
    assert address_risk(str(address)) is None
    assert address_risk(f"::ffff:{address}") is None
    assert host_risk(str(address)) is None
    assert host_risk(str(int(address))) is None


@given(address=public_ipv6)
def test_public_ipv6_addresses_pass(address):
    assert address_risk(str(address)) is None
    assert host_risk(f"[{address}]") is None


@given(text=st.text() | st.from_regex(r"\[?[0-9a-fx.:%]{0,40}\]?", fullmatch=True))
def test_arbitrary_strings_never_raise(text):
    assert address_risk(text) is None or isinstance(address_risk(text), str)
    assert host_risk(text) is None or isinstance(host_risk(text), str)
