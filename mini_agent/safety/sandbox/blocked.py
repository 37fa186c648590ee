"""Reading a confined command's output for the marks the sandbox leaves: a read-only file system, a denied
write or read, an unreachable network. The answer is one short sentence for the model's hint, or None."""

from __future__ import annotations

import re

from mini_agent.safety.sandbox.confinement import Confinement

_PATH = r"'?(?P<path>(?:/|\.{1,2}/|~/)[^\s:'\"]*|[\w.\-]+(?:/[\w.\-]+)*)'?"
READ_ONLY = re.compile(_PATH + r"[^\n]*?: Read-only file system|Read-only file system", re.IGNORECASE)
DENIED = re.compile(r"(?:" + _PATH + r"[^\n]{0,40}?: )?(?:Permission denied|Operation not permitted)", re.IGNORECASE)
NETWORK = re.compile(
    r"Network is unreachable|Could not resolve host|Temporary failure in name resolution|Name or service not known"
    r"|No address associated with hostname|getaddrinfo|nodename nor servname|Connection refused"
    r"|Failed to establish a new connection|Could not resolve|unable to access 'https?://"
    r"|\[Errno 13\] Permission denied[^\n]*(?:connect|socket)|(?:connect|socket)[^\n]*Permission denied",
    re.IGNORECASE,
)
MAX_TEXT = 200_000
"""Only the first characters are searched: the marks come with the failing call, not after megabytes."""


def blocked(output: str, returncode: int, confinement: Confinement) -> str | None:
    """If the output shows the sandbox blocked something, a short sentence saying what; else None."""
    text = output[:MAX_TEXT]
    level = confinement.level
    if not confinement.network and NETWORK.search(text):
        return f"Network access is off in the sandbox ({level} level): the command could not connect or resolve."
    found = READ_ONLY.search(text)
    if found:
        where = _where(found)
        writable = "only its temp dir (TMPDIR)" if level == "read-only" else "the project root and temp dirs"
        return f"The sandbox ({level} level) blocked a write{where}: {writable} are writable."
    found = DENIED.search(text)
    if found:
        where = _where(found)
        return (
            f"The sandbox ({level} level) may have denied access{where}: writes outside the writable roots and "
            "reads of credential locations are blocked."
        )
    return None


def _where(match: re.Match) -> str:
    path = match.groupdict().get("path")
    return f" to {path}" if path else ""
