"""MCP servers that fail, hang or start slowly: said at once in every output format, a call that hangs is given
up, a server never outlives the agent, a late server joins when ready, and a stdio server gets the network
settings it needs to download itself behind a proxy (and none of the agent's secrets)."""

from __future__ import annotations

import json
import os
import select
import sys
import threading
from pathlib import Path

import pytest
from support import MCP_SERVER, PATIENCE, TEST_KEY
from support.fake_api import answer, tool_use

from mini_agent.mcp.connection import Connection
from mini_agent.mcp.manager import JOINED, McpManager
from mini_agent.mcp.servers import ServerDef


def user_config(tmp_path: Path, text: str) -> None:
    """The user's config.toml; its servers are waited for up to PATIENCE (a loaded machine can take longer than
    the default 5 s to start one, and the run would go on without it). A test of the wait sets its own."""
    home = tmp_path / "mini-agent-home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(text if "mcp_timeout" in text else f"mcp_timeout = {PATIENCE}\n{text}")


def shell_server(name: str, script: str) -> str:
    return f'[mcp_servers.{name}]\ncommand = "sh"\nargs = ["-c", {json.dumps(script)}]\n'


BROKEN = '[mcp_servers.broken]\ncommand = "/nonexistent/mcp-server"\n' + shell_server("dies", "echo boom >&2; exit 3")


@pytest.mark.parametrize("output_format", ["text", "json", "stream-json"])
def test_a_server_that_cannot_start_is_said_in_every_output_format(run_cli, api, tmp_path, output_format):
    user_config(tmp_path, BROKEN)
    api.script(answer("hello"))
    done = run_cli(["-p", "hi", "--output-format", output_format], api, cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    stderr = done.stderr.decode()
    told = done.stdout.decode() if output_format == "stream-json" else stderr  # stream-json: notice records
    assert "MCP server broken failed: command not found: /nonexistent/mcp-server" in told
    assert "MCP server dies failed" in told and "boom" in told
    assert "Traceback" not in stderr
    if output_format == "text":
        return
    records = [json.loads(line) for line in done.stdout.decode().splitlines()]
    servers = {row["name"]: row for row in records[-1]["mcp_servers"]}
    assert servers["broken"]["status"] == "failed" and "command not found" in servers["broken"]["error"]
    assert servers["dies"]["status"] == "failed"
    if output_format == "stream-json":
        (init,) = [record for record in records if record.get("subtype") == "init"]
        assert {row["name"] for row in init["mcp_servers"]} == {"broken", "dies"}
        notices = [record["text"] for record in records if record["type"] == "notice"]
        assert any("broken failed" in text for text in notices)


def test_a_missing_command_fails_without_waiting_for_the_sdk(tmp_path):
    failed = threading.Event()
    connection = Connection(
        ServerDef("x", "user", "/c", "stdio", command="/nonexistent/mcp-server"),
        lambda c: failed.set() if c.status == "failed" else None,
    )
    connection.start()
    assert failed.wait(60) and connection.error == "command not found: /nonexistent/mcp-server"


def test_a_call_that_hangs_is_given_up_after_the_call_timeout(run_cli, api, tmp_path):
    user_config(
        tmp_path,
        f"[mcp_servers.test]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(MCP_SERVER))}]\n",
    )
    api.script(answer(tool_use("mcp__test__hang", {"seconds": 300}, id="h1")), answer("gave up"))
    done = run_cli(["-p", "go", "--allow", "mcp__test"], api, cwd=tmp_path, env={"MINI_AGENT_MCP_CALL_TIMEOUT": "1"})
    assert done.returncode == 0, done.stderr.decode()
    (result,) = [b for b in api.message_requests[1]["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert result["is_error"] and "no answer within 1 s" in str(result["content"])


def test_a_server_still_starting_when_the_run_ends_does_not_outlive_it(run_cli, api, tmp_path):
    pid_file = tmp_path / "server.pid"
    user_config(tmp_path, shell_server("slow", f"echo $$ > {pid_file}; exec sleep 300"))
    api.script(answer("done"))
    done = run_cli(["-p", "hi"], api, cwd=tmp_path, env={"MINI_AGENT_MCP_TIMEOUT": "0.5"})
    assert done.returncode == 0, done.stderr.decode()
    pid = int(pid_file.read_text())
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return  # already gone
    ready, _, _ = select.select([handle], [], [], 60)  # readable once the process has exited: an event
    assert ready, "the MCP server outlived the agent"


def test_a_stdio_server_gets_the_network_settings_and_no_secret(run_cli, api, tmp_path):
    seen = tmp_path / "env.txt"
    user_config(tmp_path, shell_server("net", f"env > {seen}; exec {sys.executable} {MCP_SERVER}"))
    api.script(answer("done"))
    proxy = {"HTTPS_PROXY": "http://proxy.internal:3128", "NODE_EXTRA_CA_CERTS": "/etc/corp-ca.pem"}
    done = run_cli(["-p", "hi"], api, cwd=tmp_path, env=proxy)
    assert done.returncode == 0, done.stderr.decode()
    environment = dict(line.partition("=")[::2] for line in seen.read_text().splitlines() if "=" in line)
    assert environment["HTTPS_PROXY"] == proxy["HTTPS_PROXY"]
    assert environment["NODE_EXTRA_CA_CERTS"] == proxy["NODE_EXTRA_CA_CERTS"]
    assert TEST_KEY not in seen.read_text() and "ANTHROPIC_API_KEY" not in environment


def test_a_network_failure_at_start_names_the_fix(tmp_path):
    told = threading.Event()
    script = "echo 'npm ERR! getaddrinfo ENOTFOUND registry.npmjs.org' >&2; exit 1"
    connection = Connection(
        ServerDef("npx", "user", "/c", "stdio", command="sh", args=("-c", script)),
        lambda c: told.set() if c.status == "failed" else None,
    )
    connection.start()
    assert told.wait(60)
    assert "ENOTFOUND" in connection.error and "HTTPS_PROXY" in connection.error


def test_a_late_server_joins_when_ready_and_is_said(tmp_path):
    gate = tmp_path / "go"
    script = f"while [ ! -e {gate} ]; do sleep 0.05; done; exec {sys.executable} {MCP_SERVER}"
    manager = McpManager((ServerDef("late", "user", "/c", "stdio", command="sh", args=("-c", script)),))
    published: list[list] = []
    joined = threading.Event()
    reports: list[tuple[str, str | None]] = []

    def report(name: str, error: str | None) -> None:
        reports.append((name, error))
        if error == JOINED:
            joined.set()

    manager.bind(published.append, report)
    manager.start()
    try:
        assert manager.wait_ready(0.1) == ["late"]  # the first request goes without it
        gate.touch()
        assert joined.wait(60)
        assert any(tool.name == "mcp__late__echo" for tool in published[-1])
        assert reports == [("late", JOINED)]
    finally:
        for connection in manager.connections.values():
            connection.stop()


def test_a_failure_before_anyone_listens_is_told_when_they_do(tmp_path):
    manager = McpManager((ServerDef("gone", "user", "/c", "stdio", command="/nonexistent/x"),))
    manager.start()
    connection = manager.connections["gone"]
    assert connection.wait_ready(60) is False and connection.status == "failed"
    reports: list = []
    manager.bind(lambda tools: None, lambda name, error: reports.append((name, error)))
    assert reports == [("gone", "command not found: /nonexistent/x")]
