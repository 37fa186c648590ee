"""MCP server definitions: config.toml tables, a project's .mcp.json, ${VAR} expansion, the trust hash, and
`mini-agent mcp add|list|remove` editing the user's config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mini_agent.cli.config import resolve
from mini_agent.errors import ConfigError
from mini_agent.mcp.servers import expand, servers_in_mcp_json
from mini_agent.trust import TrustStore


def project(tmp_path: Path, servers: dict) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    return root


def settings_in(tmp_path: Path, cwd: Path, user_toml: str = ""):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(user_toml)
    return resolve(env={"MINI_AGENT_HOME": str(home)}, cwd=cwd).settings


def test_claude_codes_mcp_json_and_the_users_config_are_read(tmp_path):
    root = project(
        tmp_path,
        {
            "github": {"command": "npx", "args": ["-y", "server-github"], "env": {"TOKEN": "${GH_TOKEN}"}},
            "docs": {"type": "http", "url": "https://docs.example.com/mcp", "headers": {"Authorization": "Bearer x"}},
        },
    )
    settings = settings_in(tmp_path, root, '[mcp_servers.local]\ncommand = "local-server"\n')
    servers = {server.name: server for server in settings.mcp_servers}
    assert [server.name for server in settings.mcp_servers] == ["docs", "github", "local"]
    assert servers["github"].origin == "project" and servers["github"].args == ("-y", "server-github")
    assert servers["docs"].transport == "http" and "Bearer" not in servers["docs"].summary()
    assert servers["local"].origin == "user"


@pytest.mark.parametrize(
    "entry",
    [{"command": ""}, {"url": "ftp://x"}, {"command": "x", "url": "http://x"}, {"type": "carrier-pigeon"}],
)
def test_a_broken_definition_is_a_config_error(tmp_path, entry):
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {"bad": entry}}))
    with pytest.raises(ConfigError, match="MCP server 'bad'"):
        servers_in_mcp_json(path)


def test_variables_expand_with_defaults():
    env = {"TOKEN": "abc"}
    assert expand("Bearer ${TOKEN}", env) == "Bearer abc"
    assert expand("${MISSING:-fallback}/x", env) == "fallback/x"
    with pytest.raises(ConfigError, match="MISSING is not set"):
        expand("${MISSING}", env)


@given(st.text(alphabet=st.characters(blacklist_characters="$"), max_size=30))
def test_text_without_variables_is_unchanged(text):
    assert expand(text, {}) == text


def test_trust_is_per_definition(tmp_path):
    root = project(tmp_path, {"proj": {"command": "server", "args": ["--one"]}})
    (server,) = settings_in(tmp_path, root).mcp_servers
    store = TrustStore(tmp_path / "data")
    assert not store.trusted(server)
    store.trust(server)
    assert TrustStore(tmp_path / "data").trusted(server)
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": {"command": "server", "args": ["--two"]}}}))
    (changed,) = settings_in(tmp_path, root).mcp_servers
    assert not store.trusted(changed)


def test_mcp_add_list_and_remove(run_cli, tmp_path):
    home = tmp_path / "mini-agent-home"
    home.mkdir()
    (home / "config.toml").write_text('# mine\nmodel = "m"\n')
    added = run_cli(["mcp", "add", "fs", "--env", "ROOT=/tmp", "--", "fs-server", "--flag", "x y"])
    assert added.returncode == 0, added.stderr.decode()
    web = run_cli(["mcp", "add", "web", "--url", "https://mcp.example.com/", "-H", "Authorization: Bearer ${TOK}"])
    assert web.returncode == 0, web.stderr.decode()
    listed = json.loads(run_cli(["mcp", "list", "--json"]).stdout)
    assert [row["name"] for row in listed] == ["fs", "web"]
    assert listed[0]["definition"] == "ROOT=/tmp fs-server --flag x y"
    assert "Bearer" not in listed[1]["definition"]
    again = run_cli(["mcp", "add", "fs", "--", "other"])
    assert again.returncode == 2 and "already defines" in again.stderr.decode()
    removed = run_cli(["mcp", "remove", "fs"])
    assert removed.returncode == 0, removed.stderr.decode()
    assert [row["name"] for row in json.loads(run_cli(["mcp", "list", "--json"]).stdout)] == ["web"]
    assert (home / "config.toml").read_text().startswith('# mine\nmodel = "m"\n')
