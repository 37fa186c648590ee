"""`mini-agent mcp add|remove`: a server's table added to, or cut from, a config.toml or `.mcp.json`, leaving the
rest of the file (comments, order, the user's other settings) as the user wrote it. The TOML is edited with
tomlkit, which keeps comments; every change is locked and atomic (file_update), and the result is read back as
the agent will read it before it is written."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from mini_agent.errors import ConfigError
from mini_agent.files.update import update_text
from mini_agent.mcp.servers import servers_in_table


def server_table(
    command: list[str], env: dict[str, str], url: str, headers: dict[str, str], sse: bool = False
) -> dict[str, object]:
    """A server's definition as the keys of its `[mcp_servers.NAME]` table (`sse`: the older SSE transport)."""
    if url:
        return {**({"type": "sse"} if sse else {}), "url": url, **({"headers": headers} if headers else {})}
    table: dict[str, object] = {"command": command[0]}
    if command[1:]:
        table["args"] = command[1:]
    if env:
        table["env"] = env
    return table


def add_server(path: Path, name: str, definition: dict[str, object]) -> None:
    """Add a server's table; refuses a name the file already defines."""

    def change(before: str) -> str:
        import tomlkit  # only `mcp add|remove` edit TOML

        document = _parsed(before, path, tomlkit.parse)
        servers = document.get("mcp_servers")
        if servers is None:
            servers = document["mcp_servers"] = tomlkit.table(is_super_table=True)
        elif not isinstance(servers, dict):
            raise ConfigError(f"mcp_servers in {path} is not a table; fix it by hand first.")
        if name in servers:
            raise ConfigError(f"{path} already defines the MCP server {name}; remove it first.")
        table = tomlkit.table()
        for key, value in definition.items():
            if isinstance(value, dict):
                inline = tomlkit.inline_table()
                inline.update(value)
                value = inline
            table[key] = value
        servers[name] = table
        after = tomlkit.dumps(document)
        servers_in_table(_parsed(after, path, tomllib.loads), "user", path)  # one the agent can read
        return after

    update_text(path, change)


def remove_server(path: Path, name: str) -> None:
    def change(before: str) -> str:
        import tomlkit

        document = _parsed(before, path, tomlkit.parse)
        servers = document.get("mcp_servers")
        if not isinstance(servers, dict) or name not in servers:
            raise ConfigError(f"{path} defines no MCP server {name}.")
        del servers[name]
        return tomlkit.dumps(document)

    update_text(path, change)


def remove_from_mcp_json(path: Path, name: str) -> None:
    def change(before: str) -> str:
        try:
            data = json.loads(before)
        except ValueError as exc:
            raise ConfigError(f"{path} is not valid JSON: {exc}; fix it by hand first.") from None
        servers = data.get("mcpServers") if isinstance(data, dict) else None
        if not isinstance(servers, dict) or name not in servers:
            raise ConfigError(f"{path} defines no MCP server {name}.")
        del servers[name]
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    update_text(path, change)


def _parsed(text: str, path: Path, parse):
    try:
        return parse(text)
    except ValueError as exc:  # tomllib.TOMLDecodeError and tomlkit.exceptions.ParseError
        raise ConfigError(f"{path} is not valid TOML: {exc}; fix it by hand first.") from None
