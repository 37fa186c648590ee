"""mini-agent against the MCP reference server `server-everything` (tests/support/server_everything.py), over
stdio, streamable HTTP and SSE: its prompt as a slash command, its resource template read by the model. Skipped,
saying why, where node, npm or the npm registry are missing."""

from __future__ import annotations

import json

import pytest
from support.fake_api import answer, tool_use
from support.mcp_config import tool_results, user_config
from support.server_everything import listening, server_everything


@pytest.mark.parametrize("transport", ["stdio", "streamableHttp", "sse"])
def test_server_everything_prompts_and_resources(run_cli, api, tmp_path, transport):
    command = server_everything()
    if transport == "stdio":
        user_config(tmp_path, f'[mcp_servers.ev]\ncommand = {json.dumps(str(command))}\nargs = ["stdio"]\n')
        run = _session
    else:
        run = _over_http
    run(run_cli, api, tmp_path, transport)


def _over_http(run_cli, api, tmp_path, transport):
    with listening(transport) as port:
        kind, path = ("sse", "sse") if transport == "sse" else ("http", "mcp")
        user_config(tmp_path, f'[mcp_servers.ev]\ntype = "{kind}"\nurl = "http://127.0.0.1:{port}/{path}"\n')
        _session(run_cli, api, tmp_path, transport)


def _session(run_cli, api, tmp_path, transport):
    api.script(
        answer("sunny"),
        answer(tool_use("read_mcp_resource", {"server": "ev", "uri": "demo://resource/dynamic/text/7"}, id="r1")),
        answer("read"),
    )
    done = run_cli([], api, typed=["/mcp__ev__args-prompt Paris", "read resource 7", "/mcp"])
    assert done.returncode == 0, done.stderr.decode()
    first = json.dumps(api.message_requests[0]["messages"])
    assert "What's weather in Paris?" in first and '<mcp_prompt server=\\"ev\\" name=\\"args-prompt\\">' in first
    assert "list_mcp_resources" in {tool["name"] for tool in api.message_requests[1]["tools"]}
    (read,) = tool_results(api.message_requests[2])
    assert "Resource 7" in read["content"] and 'uri="demo://resource/dynamic/text/7"' in read["content"]
    assert "prompts: /mcp__ev__args-prompt" in done.stdout.decode()
