"""Reading a confined command's output for the marks the sandbox leaves: a read-only file system, a denied
write or read, an unreachable network. The answer is one short sentence for the model's hint, or None."""

from __future__ import annotations

import re

from mini_agent.safety.sandbox.confinement import Confinement

READ_ONLY = re.compile(r"Read-only file system", re.IGNORECASE)
DENIED = re.compile(r"Permission denied|Operation not permitted", re.IGNORECASE)
NETWORK = re.compile(
    r"Network is unreachable|Could not resolve host|Temporary failure in name resolution|Name or service not known"
    r"|No address associated with hostname|getaddrinfo failed|nodename nor servname|Connection refused"
    r"|Failed to establish a new connection|Could not resolve|Failed to connect to|Couldn't connect to server"
    r"|connect: Permission denied|\[Errno 13\] Permission denied[^\n]*(?:connect|socket)",
    re.IGNORECASE,
)
# What tools put before the path: `touch: cannot touch '/x'`, `sh: 1: cannot create x`, `ls: cannot open directory`.
VERB = re.compile(r"^(?:cannot|can't|could not|unable to|failed to) ", re.IGNORECASE)
QUOTES = "'\"`‘’ "
MAX_TEXT = 200_000
"""Only the first characters are searched: the marks come with the failing call, not after megabytes."""
MAX_PATHS = 3


def blocked(output: str, returncode: int, confinement: Confinement) -> str | None:
    """If the output shows the sandbox blocked something, a short sentence saying what; else None."""
    text = output[:MAX_TEXT]
    level = f"{confinement.level} level"
    if not confinement.network and NETWORK.search(text):
        return f"Network access is off in the sandbox ({level}): the command could not connect or resolve a host."
    read_only = _paths(text, READ_ONLY)
    if read_only is not None:
        writable = "only its TMPDIR is" if confinement.level == "read-only" else "the project root and temp dirs are"
        return f"The sandbox ({level}) blocked a write{_listed(read_only)}: {writable} writable."
    denied = _paths(text, DENIED)
    if denied is not None:
        return (
            f"The sandbox ({level}) may have denied access{_listed(denied)}: writes outside the writable places, "
            "reads of credential locations and Unix sockets (the user's local services) are blocked."
        )
    return None


def _paths(text: str, error: re.Pattern) -> list[str] | None:
    """The paths named on the lines with this error (maybe none); None when no line has it."""
    found: list[str] = []
    seen = False
    for line in text.splitlines():
        match = error.search(line)
        if not match:
            continue
        seen = True
        path = _path_before(line[: match.start()]) or _path_after(line[match.end() :])
        if path and path not in found:
            found.append(path)
    return found if seen else None


def _path_before(head: str) -> str | None:
    """`cat: /x/y` -> /x/y: the last `: `-separated part before the error, without the tool's verb."""
    part = head.rstrip(": ").rsplit(": ", 1)[-1]
    if VERB.match(part):
        part = part.split()[-1]  # the verb and its object ("open directory") come before the path
    part = part.strip(QUOTES)
    return part if part and " " not in part and not part.isdigit() and part[0] != "[" else None


def _path_after(tail: str) -> str | None:
    """Python's `PermissionError: [Errno 13] Permission denied: '/x'`."""
    part = tail.lstrip(": ").strip().strip(QUOTES)
    return part if part and " " not in part else None


def _listed(paths: list[str]) -> str:
    if not paths:
        return ""
    shown = ", ".join(paths[:MAX_PATHS])
    more = f" and {len(paths) - MAX_PATHS} more" if len(paths) > MAX_PATHS else ""
    return f" to {shown}{more}"
