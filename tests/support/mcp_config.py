"""MCP servers in a test's configuration: the user's config.toml with servers in it, the test server over stdio
or over HTTP/SSE on loopback (a child process, stopped at the end), and the tool results of a request."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from support import MCP_SERVER, PATIENCE, eventually


def user_config(tmp_path: Path, text: str) -> None:
    """The user's config.toml; its servers are waited for up to PATIENCE (a loaded machine can take longer than
    the default 5 s to start one, and the run would go on without it). A test of the wait sets its own."""
    home = tmp_path / "mini-agent-home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(text if "mcp_timeout" in text else f"mcp_timeout = {PATIENCE}\n{text}")


def stdio_server(name: str = "test", extra: str = "") -> str:
    command = json.dumps(sys.executable)
    return f"[mcp_servers.{name}]\ncommand = {command}\nargs = [{json.dumps(str(MCP_SERVER))}]\n{extra}"


def tool_results(request: dict) -> list[dict]:
    return [block for block in request["messages"][-1]["content"] if block.get("type") == "tool_result"]


@contextmanager
def http_server(tmp_path: Path, *flags: str, env: dict | None = None) -> Iterator[int]:
    """The test server on a free loopback port (`--sse`: the older SSE transport at /sse), with `env` added to
    its environment; yields the port."""
    port_file = tmp_path / "port"
    command = [sys.executable, str(MCP_SERVER), "--http", str(port_file), *flags]
    server = subprocess.Popen(command, env={**os.environ, **(env or {})})
    try:
        eventually(lambda: server.poll() is not None or port_file.exists(), "the MCP server listening")
        assert server.poll() is None, "the MCP server exited"
        yield int(port_file.read_text())
    finally:
        server.terminate()
        server.wait(PATIENCE)
