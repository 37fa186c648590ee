"""`mini-agent mcp add|remove`: a server's table appended to, or cut from, a config.toml, leaving the rest of
the file (comments, order) as the user wrote it; checked by reading the file back."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from mini_agent.errors import ConfigError
from mini_agent.mcp.servers import servers_in_table


def _string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string


def _table(pairs: dict[str, str]) -> str:
    return "{ " + ", ".join(f"{_string(key)} = {_string(value)}" for key, value in pairs.items()) + " }"


def server_toml(name: str, command: list[str], env: dict[str, str], url: str, headers: dict[str, str]) -> str:
    lines = [f"[mcp_servers.{name}]"]
    if url:
        lines.append(f"url = {_string(url)}")
        if headers:
            lines.append(f"headers = {_table(headers)}")
    else:
        lines.append(f"command = {_string(command[0])}")
        if command[1:]:
            lines.append("args = [" + ", ".join(_string(arg) for arg in command[1:]) + "]")
        if env:
            lines.append(f"env = {_table(env)}")
    return "\n".join(lines) + "\n"


def add_server(path: Path, name: str, text: str) -> None:
    """Append a server's table; refuses a name the file already defines."""
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    data = _parse(before, path)
    if name in data.get("mcp_servers", {}):
        raise ConfigError(f"{path} already defines the MCP server {name}; remove it first.")
    after = before + ("\n" if before and not before.endswith("\n\n") else "") + text
    servers_in_table(_parse(after, path), "user", path)  # the new definition must be one the agent can read
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(after, encoding="utf-8")


def remove_server(path: Path, name: str) -> None:
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    if name not in _parse(before, path).get("mcp_servers", {}):
        raise ConfigError(f"{path} defines no MCP server {name}.")
    header = re.compile(rf"^\s*\[\s*mcp_servers\s*\.\s*(?:{re.escape(name)}|\"{re.escape(name)}\")\s*(\]|\.)")
    kept, skipping = [], False
    for line in before.splitlines(keepends=True):
        if line.lstrip().startswith("["):
            skipping = bool(header.match(line))
        if not skipping:
            kept.append(line)
    after = "".join(kept)
    if name in _parse(after, path).get("mcp_servers", {}):
        raise ConfigError(f"The MCP server {name} is not a [mcp_servers.{name}] table in {path}; edit the file.")
    path.write_text(after, encoding="utf-8")


def remove_from_mcp_json(path: Path, name: str) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    if name not in data.get("mcpServers", {}):
        raise ConfigError(f"{path} defines no MCP server {name}.")
    del data["mcpServers"][name]
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _parse(text: str, path: Path) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}.") from None
