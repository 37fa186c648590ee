"""Which TCP listening sockets of the agent's network namespace belong to a set of processes (Linux, /proc).

web_fetch may reach loopback only where a background job of the session listens (jobs.py). An address and port
count as the job's only if *every* socket listening there belongs to the job's processes: a job that binds the
port of a service the user runs (SO_REUSEPORT, a wildcard beside a specific address, IPv6 beside IPv4) does not
make that service fetchable. Sockets are matched by inode: a process's `/proc/PID/fd` links (`socket:[N]`)
against `/proc/net/tcp` and `/proc/net/tcp6`, which list the sockets of the reader's own network namespace, so
a job in a namespace of its own (the sandbox without network) serves nothing the agent can reach.

Standard library only.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv6Address, ip_address

from mini_agent.processes.orphans import _process_table

LISTEN = "0A"
TABLES = ("/proc/net/tcp", "/proc/net/tcp6")


@dataclass(frozen=True)
class Listener:
    address: IPv4Address | IPv6Address
    port: int
    inode: int


def listeners() -> list[Listener]:
    """Every TCP socket listening in this network namespace."""
    found: list[Listener] = []
    for table in TABLES:
        try:
            with open(table) as lines:
                next(lines, None)
                for line in lines:
                    fields = line.split()
                    if len(fields) > 9 and fields[3] == LISTEN:
                        host, port = fields[1].split(":")
                        found.append(Listener(_address(host), int(port, 16), int(fields[9])))
        except (OSError, ValueError):
            continue
    return found


def _address(text: str) -> IPv4Address | IPv6Address:
    """/proc/net's hex address: 32-bit words in host byte order (little-endian here)."""
    raw = bytes.fromhex(text)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return ip_address(words)


def socket_inodes(pids: Iterable[int]) -> set[int]:
    """The socket inodes the processes hold open (processes we may not look into hold none we can see)."""
    inodes: set[int] = set()
    for pid in pids:
        try:
            names = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for name in names:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{name}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(int(target[8:-1]))
    return inodes


def _matches(listener: Listener, address: IPv4Address | IPv6Address, port: int) -> bool:
    """Whether a connection to (address, port) could be accepted by this socket."""
    if listener.port != port:
        return False
    bound = listener.address
    if isinstance(bound, IPv6Address) and bound.ipv4_mapped is not None:
        bound = bound.ipv4_mapped
    if bound == address or bound.is_unspecified and bound.version == address.version:
        return True
    return bound == IPv6Address("::")  # a dual-stack wildcard may take IPv4 too (IPV6_V6ONLY is not in /proc)


def served_by(address: str, port: int, inodes: set[int]) -> bool:
    """Whether (address, port) is served only by sockets among `inodes` (and by at least one)."""
    try:
        wanted = ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(wanted, IPv6Address) and wanted.ipv4_mapped is not None:
        wanted = wanted.ipv4_mapped
    candidates = [listener for listener in listeners() if _matches(listener, wanted, port)]
    return bool(candidates) and all(listener.inode in inodes for listener in candidates)


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it (a process re-parented to init is no longer among them)."""
    table = _process_table()
    members, pending = [], [pid]
    while pending:
        current = pending.pop()
        members.append(current)
        pending += table.get(current, [])
    return members
