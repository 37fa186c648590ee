"""Which network destinations a fetch should not reach unasked: loopback, private, link-local, metadata...

Pure: classifies address and host strings with the standard library's `ipaddress`; never resolves a name.
`address_risk` judges an address a name resolved to; `host_risk` judges a URL's host as written, which only
settles literal addresses and the few names that are internal by definition (everything else is judged
after resolution).
"""

from __future__ import annotations

import re
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address

LOOPBACK = "a loopback address"
PRIVATE = "a private network address"
LINK_LOCAL = "a link-local address"
METADATA = "a cloud metadata address"
UNSPECIFIED = "an unspecified address"
MULTICAST = "a multicast address"
RESERVED = "a reserved address"
SHARED = "a carrier-grade NAT address"
UNRECOGNISED = "an unrecognised address"

METADATA_ADDRESSES = frozenset(
    ip_address(address)
    for address in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean, ...
        "fd00:ec2::254",  # AWS over IPv6
        "100.100.100.200",  # Alibaba Cloud
        "168.63.129.16",  # Azure's host endpoint (WireServer): a public-looking address inside every VM
    )
)
METADATA_NAMES = frozenset({"metadata.google.internal", "metadata.goog", "instance-data.ec2.internal"})
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})

IPV4_RANGES: tuple[tuple[IPv4Network, str], ...] = tuple(
    (IPv4Network(network), reason)
    for network, reason in (
        ("0.0.0.0/8", UNSPECIFIED),  # "this network": 0.0.0.0 reaches the local host on Linux
        ("127.0.0.0/8", LOOPBACK),
        ("169.254.0.0/16", LINK_LOCAL),
        ("224.0.0.0/4", MULTICAST),
        ("10.0.0.0/8", PRIVATE),
        ("172.16.0.0/12", PRIVATE),
        ("192.168.0.0/16", PRIVATE),
        ("100.64.0.0/10", SHARED),
        ("192.0.0.0/24", RESERVED),
        ("192.0.2.0/24", RESERVED),
        ("192.88.99.0/24", RESERVED),
        ("198.18.0.0/15", RESERVED),
        ("198.51.100.0/24", RESERVED),
        ("203.0.113.0/24", RESERVED),
        ("240.0.0.0/4", RESERVED),  # includes the broadcast address 255.255.255.255
    )
)
IPV6_RANGES: tuple[tuple[IPv6Network, str], ...] = tuple(
    (IPv6Network(network), reason)
    for network, reason in (
        ("::1/128", LOOPBACK),
        ("::/128", UNSPECIFIED),
        ("fe80::/10", LINK_LOCAL),
        ("ff00::/8", MULTICAST),
        ("fc00::/7", PRIVATE),  # unique local addresses
        ("fec0::/10", PRIVATE),  # the deprecated site-local addresses
        ("64:ff9b:1::/48", PRIVATE),  # local-use IPv4/IPv6 translation
        ("2001::/23", RESERVED),  # protocol assignments, Teredo among them
        ("2001:db8::/32", RESERVED),
        ("3fff::/20", RESERVED),
    )
)
GLOBAL_UNICAST = IPv6Network("2000::/3")
"""The only IPv6 block allocated for public addresses; anything outside it (and not embedding IPv4) is reserved."""
NAT64 = IPv6Network("64:ff9b::/96")
HEX = re.compile(r"0x[0-9a-f]*")
OCTAL = re.compile(r"0[0-7]+")
DECIMAL = re.compile(r"[0-9]+")


def address_risk(ip: str) -> str | None:
    """Why connecting to this IP address needs a human's approval ("a loopback address", ...); None if public.

    IPv6 forms that carry an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4) are judged by that
    IPv4 address. A string that is not an IP address is flagged as unrecognised rather than passed.
    """
    address = _parse(ip)
    return UNRECOGNISED if address is None else _classify(address)


def host_risk(host: str) -> str | None:
    """The risk of a URL's host as written, without resolving it; None for ordinary names (judge those later).

    Literal addresses count in every spelling a resolver accepts: `127.0.0.1`, `[::1]`, `127.1`, `2130706433`,
    `0x7f.0.0.1`, `0177.0.0.1`. So do `localhost`, `*.localhost` and the cloud metadata host names.
    """
    name = host.strip().lower()
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    if ":" in name:
        address = _parse(name)
        return None if address is None else _classify(address)
    name = name.rstrip(".")
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return LOOPBACK
    if name in METADATA_NAMES:
        return METADATA
    address = _legacy_ipv4(name)
    return None if address is None else _classify(address)


def _parse(ip: str) -> IPv4Address | IPv6Address | None:
    text = ip.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    text = text.split("%", 1)[0]  # an IPv6 zone (fe80::1%eth0) does not change what the address is
    try:
        return ip_address(text)
    except ValueError:
        return None


def _classify(address: IPv4Address | IPv6Address) -> str | None:
    if address in METADATA_ADDRESSES:
        return METADATA
    if isinstance(address, IPv4Address):
        return _classify_ipv4(address)
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        return _classify_ipv4(embedded)
    for network, reason in IPV6_RANGES:
        if address in network:
            return reason
    return None if address in GLOBAL_UNICAST else RESERVED


def _classify_ipv4(address: IPv4Address) -> str | None:
    if address in METADATA_ADDRESSES:
        return METADATA
    for network, reason in IPV4_RANGES:
        if address in network:
            return reason
    return None if address.is_global else RESERVED  # ranges the standard library knows and the table does not


def _embedded_ipv4(address: IPv6Address) -> IPv4Address | None:
    """The IPv4 address an IPv6 address stands for, when it is one of the forms that carry one."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    value = int(address)
    if address in NAT64 or (value >> 32 == 0 and value > 1):  # NAT64, or the old IPv4-compatible ::a.b.c.d
        return IPv4Address(value & 0xFFFFFFFF)
    return None


def _legacy_ipv4(name: str) -> IPv4Address | None:
    """An IPv4 address in the forms inet_aton accepts: 1 to 4 parts, each decimal, octal (0...) or hex (0x...)."""
    parts = name.split(".")
    if not 1 <= len(parts) <= 4 or len(name) > 64:
        return None
    numbers = [_number(part) for part in parts]
    if any(number is None for number in numbers):
        return None
    *leading, last = numbers
    if any(number > 0xFF for number in leading) or last >= 1 << (8 * (5 - len(parts))):
        return None
    value = last
    for position, number in enumerate(leading):
        value |= number << (8 * (3 - position))
    return IPv4Address(value)


def _number(part: str) -> int | None:
    lowered = part.lower()
    if HEX.fullmatch(lowered):
        return int(lowered[2:] or "0", 16)
    if OCTAL.fullmatch(lowered):
        return int(lowered, 8)
    return int(lowered) if DECIMAL.fullmatch(lowered) else None
