"""The installed command's exit ends a streamable HTTP server's session (issue 27): the DELETE that ends it went
out after the interpreter had shut its thread pools down, so resolving `localhost` failed ("Session termination
failed: cannot schedule new futures after shutdown") and the session stayed open on the server."""

from __future__ import annotations

from support.fake_api import answer, tool_use
from support.mcp_config import http_server, tool_results, user_config


def test_exit_ends_the_http_session_of_a_localhost_server(run_installed, api, tmp_path):
    received = tmp_path / "received"
    with http_server(tmp_path, env={"MCP_TEST_RECEIVED": str(received)}) as port:
        user_config(tmp_path, f'[mcp_servers.web]\nurl = "http://localhost:{port}/mcp"\n')
        api.script(answer(tool_use("mcp__web__add", {"a": 2, "b": 3}, id="a1")), answer("5"))
        done = run_installed(["-p", "add", "--allow", "mcp__web__add"], api)
        assert done.returncode == 0, done.stderr.decode()
        assert tool_results(api.message_requests[1])[0]["content"] == "5"
        assert "Session termination" not in done.stderr.decode()
        assert received.read_text().split("\n").count("DELETE /mcp") == 1  # the process has exited: it was sent
