"""MCP server definitions: `[mcp_servers.NAME]` tables of config.toml and a project's `.mcp.json` (the format
Claude Code writes), `${VAR}` / `${VAR:-default}` expansion, and a stable hash of a definition for trust.

Pure code apart from reading `.mcp.json`: no SDK import here, so reading the configuration stays cheap.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mini_agent.errors import ConfigError
from mini_agent.safety.workspace import project_dirs

Transport = Literal["stdio", "http", "sse"]
Origin = Literal["user", "project"]
MCP_JSON = ".mcp.json"
MASK = "****"
_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
STDIO_KEYS = {"command", "args", "env", "cwd", "type"}
HTTP_KEYS = {"url", "headers", "type"}


@dataclass(frozen=True)
class ServerDef:
    """One server as written in its file (variables not yet expanded: the hash must not hold secrets' values)."""

    name: str
    origin: Origin
    """user: the user's own config, trusted; project: arrived with the repository, asks before it runs."""
    source: str
    """The file it came from."""
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()

    def digest(self) -> str:
        """A stable hash of what the definition runs: a changed command, argument or URL asks for trust again."""
        import hashlib  # not at start-up: every run reads the definitions, few need their hash

        written = {
            "transport": self.transport,
            "command": self.command,
            "args": list(self.args),
            "env": sorted(self.env),
            "cwd": self.cwd,
            "url": self.url,
            "headers": sorted(self.headers),
        }
        return hashlib.sha256(json.dumps(written, sort_keys=True).encode()).hexdigest()[:16]

    def summary(self) -> str:
        """One line for lists and questions, with header values masked (they are usually credentials)."""
        if self.transport == "stdio":
            env = "".join(f"{key}={value} " for key, value in self.env)
            return f"{env}{' '.join((self.command, *self.args))}".strip()
        headers = ", ".join(f"{key}: {MASK}" for key, _ in self.headers)
        return f"{self.transport} {self.url}" + (f" (headers {headers})" if headers else "")


def expand(text: str, env: Mapping[str, str] | None = None) -> str:
    """`${VAR}` and `${VAR:-default}` replaced; an unset variable without a default is a ConfigError."""
    env = os.environ if env is None else env

    def value(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if env.get(name):
            return env[name]
        if default is not None:
            return default
        raise ConfigError(f"the variable {name} is not set (write ${{{name}:-default}} for a default)")

    return _VARIABLE.sub(value, text)


def servers_in_table(data: dict, origin: Origin, source: Path) -> dict[str, ServerDef]:
    """The `[mcp_servers]` table of one config file."""
    table = data.get("mcp_servers", {})
    if not isinstance(table, dict):
        raise ConfigError(f"[mcp_servers] in {source} must be a table of servers.")
    return {name: _server(name, entry, origin, str(source)) for name, entry in table.items()}


def servers_in_mcp_json(path: Path) -> dict[str, ServerDef]:
    """A project's `.mcp.json`: {"mcpServers": {"name": {"command", "args", "env"} | {"type", "url", "headers"}}}."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path} is not valid JSON: {exc}.") from None
    table = data.get("mcpServers", {}) if isinstance(data, dict) else None
    if not isinstance(table, dict):
        raise ConfigError(f'{path} must hold an object with an "mcpServers" object.')
    return {name: _server(name, entry, "project", str(path)) for name, entry in table.items()}


def find_mcp_json(cwd: Path) -> Path | None:
    """The nearest `.mcp.json` from the working directory up to the repository root."""
    for directory in project_dirs(cwd):
        if (directory / MCP_JSON).is_file():
            return directory / MCP_JSON
    return None


def _server(name: str, entry: object, origin: Origin, source: str) -> ServerDef:
    where = f"MCP server {name!r} in {source}"
    if not _NAME.match(name):
        raise ConfigError(f"{where}: a server name may hold only letters, digits, '_' and '-'.")
    if "__" in name:
        raise ConfigError(f"{where}: a server name may not contain '__' (tool names are mcp__<server>__<tool>).")
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} must be a table with `command` (stdio) or `url` (HTTP).")
    kind = entry.get("type") or ("stdio" if "command" in entry else "http" if "url" in entry else None)
    if kind in ("streamable-http", "streamable_http"):
        kind = "http"
    if kind not in ("stdio", "http", "sse"):
        raise ConfigError(f"{where} needs `command` (stdio) or `url` (HTTP); type {kind!r} is not known.")
    allowed = STDIO_KEYS if kind == "stdio" else HTTP_KEYS
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}; a {kind} server takes {', '.join(sorted(allowed))}.")
    if kind == "stdio":
        command = entry.get("command")
        if not isinstance(command, str) or not command.strip():
            raise ConfigError(f"{where}: `command` must be a non-empty string.")
        args = entry.get("args", [])
        if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
            raise ConfigError(f"{where}: `args` must be a list of strings.")
        cwd = entry.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise ConfigError(f"{where}: `cwd` must be a string.")
        env = _pairs(entry.get("env", {}), f"{where}: `env`")
        return ServerDef(name, origin, source, "stdio", command=command, args=tuple(args), env=env, cwd=cwd)
    url = entry.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://", "${")):
        raise ConfigError(f"{where}: `url` must be an http:// or https:// URL.")
    headers = _pairs(entry.get("headers", {}), f"{where}: `headers`")
    return ServerDef(name, origin, source, kind, url=url, headers=headers)


def _pairs(value: object, what: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(f"{what} must be a table of strings.")
    return tuple(sorted(value.items()))


def configured(user: dict, user_path: Path, project: dict, project_path: Path | None, cwd: Path) -> tuple:
    """Every server in force, sorted by name: the user's, then the project config's and `.mcp.json`'s (a project
    definition of the same name replaces the user's, and like every project server it needs trust)."""
    servers = servers_in_table(user, "user", user_path)
    if project_path is not None:
        servers.update(servers_in_table(project, "project", project_path))
    mcp_json = find_mcp_json(cwd)
    if mcp_json is not None:
        servers.update(servers_in_mcp_json(mcp_json))
    return tuple(servers[name] for name in sorted(servers))
