"""A stdio MCP server as a child of the agent: what it inherits of the environment (the SDK's minimal set plus the
network settings a `npx`/`uvx` server needs, never the agent's secrets), the check that its command exists (before
the SDK's import, which takes a second), finding its process group (the SDK does not say its pid: its stderr file
does) so the bash watchdog can kill it with the agent, and the hint a network failure at start deserves."""

from __future__ import annotations

import os
import re
import shutil

NETWORK_VARIABLES = (
    *(f"{name}_proxy" for name in ("http", "https", "all", "no", "ftp")),
    *(f"{name}_PROXY" for name in ("HTTP", "HTTPS", "ALL", "NO", "FTP")),
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "PIP_CERT",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "UV_INDEX_URL",
    "UV_DEFAULT_INDEX",
    "UV_EXTRA_INDEX_URL",
    "npm_config_registry",
    "NPM_CONFIG_REGISTRY",
    "npm_config_cafile",
    "NPM_CONFIG_CAFILE",
    "LANG",
    "LC_ALL",
    "TMPDIR",
    "XDG_CACHE_HOME",
)
"""Passed through to stdio servers: without them `npx -y`/`uvx` servers cannot download behind a proxy or a
private CA. Configuration, not credentials (a proxy URL with a password is masked like any secret)."""
NETWORK_TROUBLE = re.compile(
    r"ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET|getaddrinfo|Could not resolve|certificate|SSL|"
    r"self[- ]signed|proxy|Failed to (fetch|download)|network|Connection refused|timed out",
    re.IGNORECASE,
)


def require_command(command: str, path: str) -> None:
    """Fail at once, and clearly, for a command that cannot run: the SDK takes seconds to say so."""
    found = shutil.which(command, path=path) if os.sep not in command else command
    if not found or not os.access(found, os.X_OK) or os.path.isdir(found):
        raise FileNotFoundError(2, "command not found", command)


def watch_token() -> dict[str, str]:
    try:
        from mini_agent.processes.watchdog import watchdog
    except ImportError:
        return {}
    return watchdog().environment()


def child_writing_to(device: int, inode: int) -> int:
    """The pid of our child process whose stderr is the given file, or 0."""
    me = os.getpid()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                parent = int(stat.read().rsplit(b")", 1)[1].split()[1])
            if parent != me:
                continue
            found = os.stat(f"/proc/{entry.name}/fd/2")
        except (OSError, ValueError, IndexError):
            continue
        if (found.st_dev, found.st_ino) == (device, inode):
            return int(entry.name)
    return 0


def network_advice(told: str) -> str:
    if not NETWORK_TROUBLE.search(told):
        return ""
    return (
        " — it looks like a network failure: if your network needs a proxy or a private CA, set HTTPS_PROXY, "
        "SSL_CERT_FILE or NODE_EXTRA_CA_CERTS in your environment (they are passed to stdio servers)"
    )
