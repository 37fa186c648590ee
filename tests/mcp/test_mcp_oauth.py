"""OAuth for remote MCP servers, end to end in process: a real OAuth-protected MCP server built with the `mcp` SDK
(tests/support/oauth_mcp_server.py: its authorization server, dynamic registration, PKCE, refresh), `mini-agent
mcp login` with a test browser following the URL it prints, and sessions that then use the stored tokens."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest
from support import PATIENCE
from support.fake_api import answer, tool_use
from support.oauth import Browser, login_in_process, start_server
from test_mcp_end_to_end import stdio_server, tool_results, user_config


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    started = start_server(tmp_path_factory.mktemp("oauth-server"))
    yield started
    started.stop()


@pytest.fixture
def secure(server, tmp_path):
    """The user's config naming the server `secure`; the server in its normal mode."""
    server.control("reset")
    user_config(tmp_path, f'[mcp_servers.secure]\nurl = "{server.url}"\n')
    return server


def login(tmp_path: Path, browse=None, *extra: str):
    variables = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "MINI_AGENT_"))}
    variables.update(
        {"NO_COLOR": "1", "MINI_AGENT_HOME": str(tmp_path / "mini-agent-home"), "MINI_AGENT_NO_SERVER": "1"}
    )
    browse = Browser() if browse is None else browse
    return login_in_process(["mcp", "login", "secure", "--no-browser", *extra], variables, tmp_path, browse)


def token_files(tmp_path: Path) -> list[Path]:
    directory = tmp_path / "mini-agent-home" / "mcp-oauth"
    return sorted(path for path in directory.glob("*.json")) if directory.exists() else []


def stored(tmp_path: Path) -> dict:
    (path,) = token_files(tmp_path)
    return json.loads(path.read_text())


def everything_written(tmp_path: Path) -> bytes:
    """Every file of mini-agent's home but the token files themselves: sessions, trust, config."""
    home = tmp_path / "mini-agent-home"
    return b"".join(path.read_bytes() for path in home.rglob("*") if path.is_file() and "mcp-oauth" not in path.parts)


def test_login_keeps_the_tokens_privately_and_the_next_session_uses_them_unasked(secure, run_cli, api, tmp_path):
    done = login(tmp_path)
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr.decode()
    assert f"Logging in to the MCP server secure at {secure.url}" in out and "/authorize?" in out
    assert "Logged in to secure: 2 tools." in out
    (path,) = token_files(tmp_path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    record = stored(tmp_path)
    access, refresh = record["tokens"]["access_token"], record["tokens"]["refresh_token"]
    assert record["url"] == secure.url and record["client"]["client_id"]
    asked = secure.counts()["authorized"]

    api.script(answer(tool_use("mcp__secure__whoami", {}, id="w1")), answer("done"))
    done = run_cli(["-p", "who am I", "--allow", "mcp__secure__whoami"], api)
    assert done.returncode == 0, done.stderr.decode()
    assert tool_results(api.message_requests[1])[0]["content"] == record["client"]["client_id"]
    assert secure.counts()["authorized"] == asked  # nobody was asked again
    seen = done.stdout + done.stderr + everything_written(tmp_path) + json.dumps(api.message_requests).encode()
    assert access.encode() not in seen and refresh.encode() not in seen

    # A token the model got hold of is a known secret: it goes to no server unasked.
    api.script(answer(tool_use("mcp__secure__echo", {"text": f"leak {refresh}"}, id="e1")), answer("done"))
    done = run_cli(["-p", "echo", "--allow", "mcp__secure__echo"], api)
    refused = tool_results(api.message_requests[-1])[0]
    assert done.returncode == 4 and refused["is_error"] is True and "echo: leak" not in refused["content"]


def test_an_expired_access_token_is_refreshed_without_asking(secure, run_cli, api, tmp_path):
    assert login(tmp_path).returncode == 0
    before, counts = stored(tmp_path), secure.counts()
    secure.control("expire")  # the server no longer takes it, though the client's clock says it is good
    api.script(answer(tool_use("mcp__secure__whoami", {}, id="w1")), answer("done"))
    done = run_cli(["-p", "who", "--allow", "mcp__secure__whoami"], api)
    assert done.returncode == 0, done.stderr.decode()
    assert tool_results(api.message_requests[1])[0]["content"] == before["client"]["client_id"]
    after = secure.counts()
    assert after["refreshed"] == counts["refreshed"] + 1 and after["authorized"] == counts["authorized"]
    assert stored(tmp_path)["tokens"]["access_token"] != before["tokens"]["access_token"]

    # Time passes on the client's clock too: the stored expiry has passed, so it refreshes before sending.
    (path,) = token_files(tmp_path)
    path.write_text(json.dumps({**stored(tmp_path), "expires_at": 1.0}))
    counts = secure.counts()
    api.script(answer(tool_use("mcp__secure__whoami", {}, id="w2")), answer("done"))
    assert run_cli(["-p", "who", "--allow", "mcp__secure__whoami"], api).returncode == 0
    after = secure.counts()
    assert after["refreshed"] == counts["refreshed"] + 1 and after["unauthorized"] == counts["unauthorized"]


def test_without_a_login_the_server_needs_one_and_the_session_goes_on_with_its_other_tools(
    secure, run_cli, api, tmp_path
):
    assert login(tmp_path).returncode == 0
    done = run_cli(["mcp", "logout", "secure"])
    assert done.returncode == 0 and "Logged out of secure" in done.stdout.decode()
    assert token_files(tmp_path) == []
    assert "No login of secure" in run_cli(["mcp", "logout", "secure"]).stdout.decode()

    registered = secure.counts()["registered"]
    user_config(tmp_path, f'[mcp_servers.secure]\nurl = "{secure.url}"\n' + stdio_server())
    api.script(answer(tool_use("mcp__test__echo", {"text": "hi"}, id="e1")), answer("done"))
    done = run_cli(["-p", "echo", "--allow", "mcp__test__echo"], api)
    assert done.returncode == 0, done.stderr.decode()
    assert "MCP server secure needs login: run `mini-agent mcp login secure`" in done.stderr.decode()
    names = [tool["name"] for tool in api.message_requests[0]["tools"]]
    assert "mcp__test__echo" in names and not any(name.startswith("mcp__secure__") for name in names)
    assert tool_results(api.message_requests[1])[0]["content"] == "echo: hi"
    assert secure.counts()["registered"] == registered  # no registration, no flow, outside a login


def test_a_redirect_with_a_forged_state_is_refused_and_the_real_one_still_logs_in(secure, tmp_path):
    browser = Browser(first_forged=True)
    done = login(tmp_path, browser)
    assert done.returncode == 0, done.stderr.decode()
    (_, approved, _), (forged, refused, text), (_, status, _) = browser.visits
    assert "state=forged-" in forged and refused == 400 and "state does not match" in text
    assert (approved, status) == (302, 200)


def test_metadata_sending_the_browser_to_plain_http_is_refused(secure, tmp_path):
    secure.control("evil")
    done = login(tmp_path, lambda url: pytest.fail(f"a browser was sent to {url}"))
    assert done.returncode == 1
    said = done.stderr.decode()
    assert "refused the authorization URL" in said and "plain http to login.example.test" in said
    assert "/authorize?" not in done.stdout.decode()
    assert not any(json.loads(path.read_text()).get("tokens") for path in token_files(tmp_path))


def test_the_token_file_is_out_of_a_sandboxed_command_s_reach(secure, run_cli, tmp_path):
    from mini_agent.safety.sandbox import mechanism

    found = mechanism()
    if (
        found is None or found.name != "bubblewrap"
    ):  # Landlock cannot hide a directory inside /tmp, where the tests' homes are
        pytest.skip("needs bubblewrap")
    assert login(tmp_path).returncode == 0
    (path,) = token_files(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    done = run_cli(["sandbox", "run", "--", "cat", str(path)], cwd=project)
    assert done.returncode != 0 and b"access_token" not in done.stdout


def test_a_login_waits_only_as_long_as_it_is_told(secure, tmp_path):
    done = login(tmp_path, lambda url: None, "--timeout", "0.5")
    assert done.returncode == 1 and "did not come back within 0.5 s" in done.stderr.decode()


def test_mcp_shows_needs_login(secure, tmp_path):
    from mini_agent.mcp.manager import McpManager
    from mini_agent.mcp.servers import ServerDef
    from mini_agent.ui.mcp_view import status_lines

    manager = McpManager((ServerDef("secure", "user", "config.toml", "http", url=secure.url),), data_dir=tmp_path)
    manager.start()
    assert manager.wait_ready(PATIENCE) == []
    try:
        lines = status_lines(manager)
        assert lines[0].startswith("secure  needs login  http ") and "mini-agent mcp login secure" in lines[1]
    finally:
        manager.connections["secure"].stop()


def test_mcp_login_in_the_repl_logs_in_and_the_server_s_tools_join(secure, tmp_path):
    """`/mcp login NAME`: the URL shown (sanitised, on one line), the browser comes back, the server starts again
    with its tokens and lists its tools."""
    import io
    import threading
    from types import SimpleNamespace

    from rich.console import Console
    from support import eventually

    from mini_agent.app.repl_commands import builtin_commands
    from mini_agent.mcp.manager import McpManager
    from mini_agent.mcp.servers import ServerDef
    from mini_agent.safety.secrets import SecretSet

    secrets = SecretSet()
    manager = McpManager((ServerDef("secure", "user", "config.toml", "http", url=secure.url),), data_dir=tmp_path)
    manager.start()
    assert manager.wait_ready(PATIENCE) == [] and manager.connections["secure"].status == "needs login"
    console = Console(file=io.StringIO(), width=60)
    repl = SimpleNamespace(
        agent=SimpleNamespace(mcp=manager), settings=SimpleNamespace(data_dir=tmp_path, secret_set=secrets)
    )
    repl.console = console
    commands = builtin_commands(repl)
    browser = Browser()

    def person() -> None:
        shown = eventually(lambda: re.search(r"^(http\S+/authorize\?\S+)$", console.file.getvalue(), re.M), "the URL")
        browser(shown.group(1))

    threading.Thread(target=person, daemon=True).start()
    try:
        command, argument, _ = commands.find("/mcp login secure")
        command.run(argument)
        assert "Logged in to secure (2 tools)" in console.file.getvalue()
        eventually(lambda: manager.connections["secure"].status == "ready", "the server connected again")
        assert [tool.name for tool in manager.tools()] == ["mcp__secure__echo", "mcp__secure__whoami"]
        assert len(secrets) == 2  # the access and refresh tokens are known secrets
    finally:
        manager.connections["secure"].stop()


@pytest.mark.parametrize(
    "url, allowed",
    [
        ("https://auth.example.com/authorize?x=1", True),
        ("http://127.0.0.1:8080/authorize", True),
        ("http://localhost/authorize", True),
        ("http://[::1]:9/authorize", True),
        ("http://mcp.example.com:8000/authorize", True),  # the origin the user configured
        ("http://auth.example.com/authorize", False),
        ("http://mcp.example.com:8001/authorize", False),
        ("http://127.0.0.1.example.com/authorize", False),
        ("http://localhost.example.com/authorize", False),
        ("http://127.0.0.1@evil.example/authorize", False),
        ("javascript:alert(1)", False),
        ("file:///etc/passwd", False),
        ("data:text/html,hi", False),
        ("https:///nohost", False),
    ],
)
def test_which_endpoints_an_oauth_flow_may_use(url, allowed):
    from mini_agent.mcp.oauth import safe_endpoint

    assert (safe_endpoint(url, "http://mcp.example.com:8000/mcp") is None) == allowed


def test_a_token_revoked_mid_session_makes_the_server_need_login_again(secure, tmp_path):
    from mini_agent.mcp.connection import Connection
    from mini_agent.mcp.servers import ServerDef

    assert login(tmp_path).returncode == 0
    server = ServerDef("secure", "user", "config.toml", "http", url=secure.url)
    connection = Connection(server, lambda _: None, data_dir=tmp_path / "mini-agent-home")
    connection.start()
    try:
        assert connection.wait_ready(PATIENCE) and connection.status == "ready"
        secure.control("revoke")  # access and refresh tokens alike: only a new login helps
        with pytest.raises(ConnectionError, match="needs login: run `mini-agent mcp login secure`"):
            connection.call("whoami", {})
        assert connection.status == "needs login"
    finally:
        connection.stop()


def test_the_model_reading_the_token_file_needs_a_yes_and_even_allowed_sees_no_token(secure, run_cli, api, tmp_path):
    assert login(tmp_path).returncode == 0
    (path,) = token_files(tmp_path)
    tokens = stored(tmp_path)["tokens"]
    api.script(answer(tool_use("read_file", {"path": str(path)}, id="r1")), answer("done"))
    done = run_cli(["-p", "read", "--yes"], api)
    assert done.returncode == 4 and "mini-agent's own data" in tool_results(api.message_requests[1])[0]["content"]

    api.script(answer(tool_use("read_file", {"path": str(path)}, id="r2")), answer("done"))
    assert run_cli(["-p", "read", "--yes", "--allow", f"read_file({path})"], api).returncode == 0
    shown = tool_results(api.message_requests[-1])[0]["content"]
    assert '"access_token": "****"' in shown and '"refresh_token": "****"' in shown
    assert tokens["access_token"] not in shown and tokens["refresh_token"] not in shown


def test_login_names_a_configured_remote_server(run_cli, tmp_path):
    user_config(tmp_path, stdio_server())
    unknown = run_cli(["mcp", "login", "nothing"])
    assert unknown.returncode == 2 and "No MCP server nothing" in unknown.stderr.decode()
    local = run_cli(["mcp", "login", "test"])
    assert local.returncode == 2 and "only remote (http, sse) servers log in" in local.stderr.decode()
