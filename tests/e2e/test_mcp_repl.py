"""MCP servers in the REPL, in a real pseudo-terminal: the trust question for a project's server, the server
started after the prompt, `/mcp`, and a call of its tool through the loopback model."""

from __future__ import annotations

import json
import sys

import pexpect
from support import MCP_SERVER
from support.fake_api import answer, tool_use
from support.repl import finish, spawn

PROMPT = "›"


def wait_until_ready(child: pexpect.spawn, name: str) -> None:
    """`/mcp` until the server is ready: it starts in the background once the prompt is drawn."""
    while True:
        child.sendline("/mcp")
        if child.expect([f"{name}  ready", f"{name}  (starting|pending)"]) == 0:
            child.expect(PROMPT)
            return
        child.expect(PROMPT)


def test_a_trusted_project_server_starts_after_the_prompt(api, tmp_path):
    (tmp_path / ".git").mkdir()
    servers = {"mcpServers": {"proj": {"command": sys.executable, "args": [str(MCP_SERVER)]}}}
    (tmp_path / ".mcp.json").write_text(json.dumps(servers))
    api.script(answer(tool_use("mcp__proj__lookup", {"key": "k"})), answer("The value is there."))
    child = spawn(api, tmp_path)
    child.expect("The project defines the MCP server proj")
    child.expect(r"Trust and start proj\?")
    child.sendline("y")
    child.expect(PROMPT)
    wait_until_ready(child, "proj")
    child.sendline("look k up")
    child.expect("needs your approval")  # readOnlyHint counts only for the user's own servers
    child.expect(r"Allow\? ")
    child.sendline("y")
    child.expect("The value is there.")
    child.expect(PROMPT)
    child.sendcontrol("d")
    assert finish(child) == 0
    (result,) = [b for b in api.message_requests[1]["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert result["content"] == "value of k"

    child = spawn(api, tmp_path)  # trusted once: not asked again
    child.expect(PROMPT)
    wait_until_ready(child, "proj")
    child.sendcontrol("d")
    assert finish(child) == 0
    assert "Trust and start" not in (child.before or "")


def test_a_declined_project_server_does_not_start(api, tmp_path):
    (tmp_path / ".git").mkdir()
    servers = {"mcpServers": {"proj": {"command": sys.executable, "args": [str(MCP_SERVER)]}}}
    (tmp_path / ".mcp.json").write_text(json.dumps(servers))
    child = spawn(api, tmp_path)
    child.expect(r"Trust and start proj\?")
    child.sendline("n")
    child.expect("not started: you declined to trust it")
    child.expect(PROMPT)
    child.sendline("/mcp")
    child.expect("proj  untrusted")
    child.expect(PROMPT)
    child.sendcontrol("d")
    assert finish(child) == 0
