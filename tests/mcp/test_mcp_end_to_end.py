"""MCP servers end to end: the command (run in process), a real MCP server (tests/mcp_server.py, written with the `mcp`
SDK) over stdio and over streamable HTTP on loopback, and the loopback model calling its tools."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
from support import MCP_SERVER, PATIENCE, eventually
from support.fake_api import answer, tool_use
from support.mcp_config import stdio_server, tool_results, user_config


def test_the_model_calls_a_stdio_servers_tools(run_cli, api, tmp_path):
    user_config(tmp_path, stdio_server())
    api.script(
        answer(tool_use("mcp__test__echo", {"text": "hello"}, id="e1")),
        answer(tool_use("mcp__test__image", {}, id="i1")),
        answer("done"),
    )
    done = run_cli(["-p", "use the server", "--allow", "mcp__test", "--output-format", "json"], api)
    assert done.returncode == 0, done.stderr.decode()
    requests = api.message_requests
    names = [tool["name"] for tool in requests[0]["tools"]]
    mcp_names = [name for name in names if name.startswith("mcp__")]
    assert mcp_names == sorted(mcp_names) and "mcp__test__echo" in mcp_names
    echo = next(tool for tool in requests[0]["tools"] if tool["name"] == "mcp__test__echo")
    assert echo["description"] == "Echo the text back."
    assert echo["input_schema"]["required"] == ["text"]
    assert [tool["name"] for tool in requests[1]["tools"]] == names  # the same tools, same order, every request
    assert tool_results(requests[1])[0]["content"] == "echo: hello"
    picture = tool_results(requests[2])[0]["content"]
    assert picture[0]["type"] == "text" and "here is the picture" in picture[0]["text"]
    assert "file:///tmp/report.txt" in picture[0]["text"]
    assert picture[1]["type"] == "image" and picture[1]["source"]["media_type"] == "image/png"


def test_errors_and_long_output_come_back_as_tool_results(run_cli, api, tmp_path):
    user_config(tmp_path, stdio_server())
    api.script(
        answer(tool_use("mcp__test__fail", {"reason": "x"}, id="f1"), tool_use("mcp__test__big", {"size": 50000})),
        answer("done"),
    )
    done = run_cli(["-p", "go", "--yes"], api)
    assert done.returncode == 0, done.stderr.decode()
    failed, big = tool_results(api.message_requests[1])
    assert failed["is_error"] is True
    assert big.get("is_error") is None
    assert '<system_hint type="truncated"' in big["content"] and len(big["content"]) < 31_000


def test_a_streamable_http_server_with_headers(run_cli, api, tmp_path):
    port_file = tmp_path / "port"
    server = subprocess.Popen(
        [sys.executable, str(MCP_SERVER), "--http", str(port_file), "--require-header", "X-Token=tok-SECRET-12345"]
    )
    try:
        eventually(lambda: server.poll() is not None or port_file.exists(), "the MCP server listening")
        assert server.poll() is None
        url = f"http://127.0.0.1:{port_file.read_text()}/mcp"
        httpx.get(url, timeout=PATIENCE)  # any answer (401: no header) says it serves: the run's client has a deadline
        user_config(tmp_path, f'[mcp_servers.web]\nurl = "{url}"\nheaders = {{ X-Token = "${{WEB_TOKEN}}" }}\n')
        api.script(answer(tool_use("mcp__web__add", {"a": 2, "b": 3}, id="a1")), answer("5"))
        done = run_cli(["-p", "add", "--allow", "mcp__web__add"], api, env={"WEB_TOKEN": "tok-SECRET-12345"})
        assert done.returncode == 0, done.stderr.decode()
        assert tool_results(api.message_requests[1])[0]["content"] == "5"
        listed = run_cli(["mcp", "list"], env={"WEB_TOKEN": "tok-SECRET-12345"})
        assert "web" in listed.stdout.decode() and "tok-SECRET" not in listed.stdout.decode()
    finally:
        server.terminate()
        server.wait(10)


def test_an_sse_server_added_as_claude_code_adds_it_and_a_hint_when_added_as_http(run_cli, api, tmp_path):
    """`mcp add --transport sse NAME URL` (Claude Code's form) reaches a real SSE server built with the `mcp` SDK;
    the same URL added as streamable HTTP fails with a hint to add it with --transport sse."""
    port_file = tmp_path / "port"
    server = subprocess.Popen([sys.executable, str(MCP_SERVER), "--http", str(port_file), "--sse"])
    try:
        eventually(lambda: server.poll() is not None or port_file.exists(), "the MCP server listening")
        url = f"http://127.0.0.1:{port_file.read_text()}/sse"
        added = run_cli(["mcp", "add", "--transport", "sse", "old", url])
        assert added.returncode == 0, added.stderr.decode()
        shown = run_cli(["mcp", "get", "old"]).stdout.decode()
        assert "transport: sse" in shown and url in shown
        api.script(answer(tool_use("mcp__old__add", {"a": 2, "b": 3}, id="a1")), answer("5"))
        done = run_cli(["-p", "add", "--allow", "mcp__old__add"], api)
        assert done.returncode == 0, done.stderr.decode()
        assert tool_results(api.message_requests[1])[0]["content"] == "5"

        assert run_cli(["mcp", "remove", "old"]).returncode == 0
        assert run_cli(["mcp", "add", "--transport", "http", "old", url]).returncode == 0
        api.script(answer("no tools"))
        failed = run_cli(["-p", "hi"], api)
        assert "--transport sse old" in failed.stderr.decode()
    finally:
        server.terminate()
        server.wait(10)


def test_mcp_add_json_and_claude_code_s_scope_names(run_cli, tmp_path):
    done = run_cli(["mcp", "add-json", "docs", '{"type": "http", "url": "https://mcp.example.com/mcp"}'])
    assert done.returncode == 0, done.stderr.decode()
    assert "http https://mcp.example.com/mcp" in run_cli(["mcp", "get", "docs"]).stdout.decode()
    bad = run_cli(["mcp", "add-json", "x", "[1]"])
    assert bad.returncode == 2 and "JSON object" in bad.stderr.decode()
    local = run_cli(["mcp", "add", "-s", "local", "here", "--", "server-bin"], cwd=tmp_path)
    assert local.returncode == 0 and (tmp_path / ".mini-agent" / "config.toml").exists()
    assert run_cli(["mcp", "get", "nothing"]).returncode == 2


def test_a_server_s_tool_gets_the_user_s_original_request_in_meta_with_secrets_masked(run_cli, api, tmp_path):
    """As built-in tools and sub-agents do (seed 003): the call's `_meta` holds the request, verbatim but for
    secrets the session knows."""
    user_config(tmp_path, stdio_server())
    api.script(answer(tool_use("mcp__test__request_meta", {}, id="m1")), answer("Seen."))
    request = 'Summarise "the <notes>" & token sk-ant-api03-SECRETSECRETSECRET0123456789, ünïcode kept'
    done = run_cli(["-p", request, "--allow", "mcp__test"], api, env={"MY_TOKEN": "SECRETSECRETSECRET0123456789"})
    assert done.returncode == 0, done.stderr.decode()
    meta = json.loads(tool_results(api.message_requests[1])[0]["content"])
    sent = meta["mini-agent/original_request"]
    assert sent.startswith('Summarise "the <notes>" & token ') and sent.endswith(", ünïcode kept")
    assert "SECRETSECRET" not in sent


def test_a_project_server_waits_for_trust(run_cli, api, tmp_path):
    user_config(tmp_path, "")  # its wait for the server: PATIENCE
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()
    servers = {"mcpServers": {"proj": {"command": sys.executable, "args": [str(MCP_SERVER)]}}}
    (project / ".mcp.json").write_text(json.dumps(servers))
    api.script(answer("no tools"))
    refused = run_cli(["-p", "hi"], api, cwd=project)
    assert refused.returncode == 0, refused.stderr.decode()
    assert "MCP server proj" in refused.stderr.decode() and "--trust-project-mcp" in refused.stderr.decode()
    assert not any(tool["name"].startswith("mcp__") for tool in api.message_requests[0]["tools"])

    api.script(answer("tools"))
    # The server's start may take longer than the default wait on a loaded machine: this is about trust.
    trusted = run_cli(
        ["-p", "hi", "--trust-project-mcp"], api, cwd=project, env={"MINI_AGENT_MCP_TIMEOUT": str(PATIENCE)}
    )
    assert trusted.returncode == 0, trusted.stderr.decode()
    assert any(tool["name"] == "mcp__proj__echo" for tool in api.message_requests[1]["tools"])


def test_rules_allow_and_deny_mcp_tools(run_cli, api, tmp_path):
    user_config(tmp_path, stdio_server())
    api.script(
        answer(tool_use("mcp__test__echo", {"text": "a"}), tool_use("mcp__test__add", {"a": 1, "b": 2})),
        answer(tool_use("mcp__test__lookup", {"key": "k"})),
        answer("done"),
    )
    done = run_cli(["-p", "go", "--allow", "mcp__test__e*", "--deny", "mcp__test__add"], api)
    assert done.returncode == 4, done.stderr.decode()  # a call was refused
    echo, add = tool_results(api.message_requests[1])
    assert echo["content"] == "echo: a"
    assert add["is_error"] and "denied by the rule" in add["content"]
    (lookup,) = tool_results(api.message_requests[2])  # readOnlyHint of the user's own server: runs unasked
    assert lookup["content"] == "value of k"


def test_without_a_rule_an_mcp_tool_asks_and_nobody_can_answer(run_cli, api, tmp_path):
    user_config(tmp_path, stdio_server())
    api.script(answer(tool_use("mcp__test__echo", {"text": "a"})), answer("ok"))
    done = run_cli(["-p", "go"], api)
    (echo,) = tool_results(api.message_requests[1])
    assert echo["is_error"] and "--allow mcp__test__echo " in echo["content"]  # quoted for a shell: nothing to quote
    assert done.returncode == 4


def test_a_crashing_server_degrades_its_tools_and_comes_back(run_cli, api, tmp_path):
    user_config(tmp_path, stdio_server())
    api.script(
        answer(tool_use("mcp__test__crash", {})),
        answer(tool_use("mcp__test__echo", {"text": "again"})),
        answer("done"),
    )
    done = run_cli(["-p", "go", "--yes"], api)
    assert done.returncode == 0, done.stderr.decode()
    first, second, third = api.message_requests
    (crashed,) = tool_results(second)
    assert crashed["is_error"] and "MCP server test failed" in crashed["content"]
    system = " ".join(block["text"] for block in second["system"])
    assert 'type="tool_degraded"' in system and "mcp__test__*" in system
    (echo,) = tool_results(third)
    assert echo["content"] == "echo: again"  # started again on next use
    assert 'type="tool_degraded"' not in " ".join(block["text"] for block in third["system"])
    assert done.stderr.decode().count("! MCP server test failed") == 1  # told once


def test_an_mcp_call_carrying_the_api_key_asks_and_the_server_never_receives_it(run_cli, api, tmp_path):
    """A rule allows the tool and the other is read-only, so today both run without a question: a secret in the
    arguments (raw, upper-cased, base64) must turn each into a question that nobody can answer here."""
    import base64

    from support import TEST_KEY

    log = tmp_path / "received.txt"
    user_config(tmp_path, stdio_server(extra=f"env = {{ MCP_TEST_RECEIVED = {json.dumps(str(log))} }}\n"))
    api.script(
        answer(
            tool_use("mcp__test__echo", {"text": f"note: {TEST_KEY}"}, id="e1"),
            tool_use("mcp__test__echo", {"text": TEST_KEY.upper()}, id="e2"),
            tool_use("mcp__test__lookup", {"key": base64.b64encode(TEST_KEY.encode()).decode()}, id="l1"),
            tool_use("mcp__test__echo", {"text": "harmless"}, id="e3"),
        ),
        answer("done"),
    )
    done = run_cli(["-p", "go", "--allow", "mcp__test__echo"], api)
    assert done.returncode == 4, done.stderr.decode()  # calls were refused
    results = {result["tool_use_id"]: result for result in tool_results(api.message_requests[1])}
    for refused in ("e1", "e2", "l1"):
        assert results[refused]["is_error"], results[refused]
        assert "contains the value of ANTHROPIC_API_KEY" in results[refused]["content"]
    assert results["e3"]["content"] == "echo: harmless"
    seen = log.read_text()
    assert "harmless" in seen
    assert TEST_KEY.lower() not in seen.lower() and base64.b64encode(TEST_KEY.encode()).decode() not in seen
    assert "ANTHROPIC_API_KEY" in done.stderr.decode()

    api.script(answer(tool_use("mcp__test__echo", {"text": TEST_KEY}, id="a1")), answer("done"))
    auto = run_cli(["-p", "go", "--permission-mode", "auto"], api)
    assert auto.returncode == 4, auto.stderr.decode()
    assert TEST_KEY not in log.read_text()


def test_past_the_budget_the_model_finds_the_servers_tools_with_a_search(run_cli, api, tmp_path):
    """A server with 155 tools (~30k tokens of schemas) is over a tenth of a 200k window: the first request
    carries tool_search instead; what the model finds joins the requests after, and runs."""
    user_config(tmp_path, stdio_server(extra='env = { MCP_TEST_MANY_TOOLS = "144" }\n'))
    api.script(
        answer(tool_use("tool_search", {"query": "echo text back"}, id="s1")),
        answer(tool_use("mcp__test__echo", {"text": "found"}, id="e1")),
        answer("done"),
    )
    done = run_cli(["-p", "echo something", "--allow", "mcp__test"], api)
    assert done.returncode == 0, done.stderr.decode()
    first, second, third = ([tool["name"] for tool in request["tools"]] for request in api.message_requests)
    assert "tool_search" in first and not any(name.startswith("mcp__") for name in first)
    assert second[: len(first)] == first and "mcp__test__echo" in second[len(first) :]
    assert "mcp__test__echo" in tool_results(api.message_requests[1])[0]["content"]
    assert tool_results(api.message_requests[2])[0]["content"] == "echo: found"
    assert len(json.dumps(api.message_requests[0]["tools"])) < 20_000  # the 155 schemas are ~135k characters


def test_a_few_tools_are_all_sent_as_before(run_cli, api, tmp_path):
    user_config(tmp_path, stdio_server())
    api.script(answer("ok"))
    assert run_cli(["-p", "hi"], api).returncode == 0
    names = [tool["name"] for tool in api.message_requests[0]["tools"]]
    assert "mcp__test__echo" in names and "tool_search" not in names
