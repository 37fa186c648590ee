"""`mini-agent mcp list|get|add|add-json|remove`: the configured MCP servers, for people and scripts. Claude Code's
forms work too: `mcp add --transport http|sse NAME URL`, `--scope local`, `mcp add-json NAME '{...}'`."""

import json

import typer

from mini_agent.cli.common import fail, settings_or_exit
from mini_agent.errors import MiniAgentError
from mini_agent.ui.terminal_text import visible


def register(app: typer.Typer) -> None:
    mcp_app = typer.Typer(help="The MCP servers the agent uses: list, add, remove.", rich_markup_mode=None)
    app.add_typer(mcp_app, name="mcp", short_help="List, add or remove MCP servers; log in to remote ones.")
    from mini_agent.cli import mcp_login

    mcp_login.register(mcp_app)

    @mcp_app.command("list")
    def list_command(as_json: bool = typer.Option(False, "--json", help="Print JSON for scripts.")) -> None:
        """List the configured MCP servers, where each is defined, and whether a project's server is trusted."""
        rows = _rows()
        if as_json:
            print(json.dumps(rows, indent=2))
            return
        if not rows:
            print("No MCP servers configured. Add one with `mini-agent mcp add NAME -- COMMAND ARGS...`.")
        for row in rows:
            trust = "" if row["origin"] == "user" else ("  trusted" if row["trusted"] else "  not trusted yet")
            print(visible(f"{row['name']}  {row['definition']}  ({row['origin']}: {row['source']}){trust}"))

    @mcp_app.command("get")
    def get_command(name: str = typer.Argument(..., help="The server's name.")) -> None:
        """Show one server: how it runs, where it is defined, whether it is trusted."""
        rows = [row for row in _rows() if row["name"] == name]
        if not rows:
            fail(f"No MCP server {name} is configured here (mini-agent mcp list shows those that are).")
        row = rows[0]
        for key in ("name", "transport", "definition", "origin", "source", "trusted"):
            print(visible(f"{key}: {row[key]}"))

    @mcp_app.command("add")
    def add_command(
        name: str = typer.Argument(..., help="The server's name: its tools are mcp__NAME__TOOL."),
        command: list[str] = typer.Argument(
            None, help="stdio: the command and its arguments (after --); http or sse: the URL."
        ),
        transport: str = typer.Option(
            "", "--transport", "-t", help="stdio | http | sse (default: stdio for a command, http for a URL)."
        ),
        url: str = typer.Option("", "--url", help="The server's URL (or give it after NAME with --transport)."),
        env: list[str] = typer.Option([], "--env", "-e", help="KEY=VALUE for the command; ${VAR} expands."),
        header: list[str] = typer.Option([], "--header", "-H", help="'Name: value' for HTTP; ${VAR} expands."),
        scope: str = typer.Option(
            "user", "--scope", "-s", help="user (your config) | project or local (.mini-agent/config.toml)."
        ),
    ) -> None:
        """Add a server to your config (or the project's), e.g. `mcp add fs -- npx -y server-filesystem .` or
        `mcp add --transport sse asana https://mcp.asana.com/sse`."""
        from mini_agent.mcp.edit import server_table

        transport = transport.lower().replace("streamable-http", "http")
        if transport not in ("", "stdio", "http", "sse"):
            fail(f"Unknown transport {transport!r}; use stdio, http or sse.")
        if transport in ("http", "sse") and not url and len(command or []) == 1:
            url, command = command[0], []  # Claude Code's form: the URL after the name
        if bool(url) == bool(command):
            fail("Give either a command (after --) or a URL (--transport http|sse NAME URL, or --url).")
        if url and transport == "stdio" or command and transport in ("http", "sse"):
            fail(f"A {transport} server takes {'a command' if transport == 'stdio' else 'a URL'}.")
        pairs = dict(item.partition("=")[::2] for item in env)
        headers = {key.strip(): value.strip() for key, _, value in (item.partition(":") for item in header)}
        _add(scope, name, server_table(command or [], pairs, url, headers, sse=transport == "sse"))

    @mcp_app.command("add-json")
    def add_json_command(
        name: str = typer.Argument(..., help="The server's name."),
        definition: str = typer.Argument(..., help='Its JSON, as in .mcp.json: {"type": "http", "url": "..."}.'),
        scope: str = typer.Option("user", "--scope", "-s", help="user | project or local."),
    ) -> None:
        """Add a server from the JSON Claude Code's `mcp add-json` takes."""
        try:
            table = json.loads(definition)
        except ValueError as exc:
            fail(f"Not JSON: {exc}.")
        if not isinstance(table, dict):
            fail('The definition must be a JSON object, e.g. {"command": "npx", "args": ["-y", "server"]}.')
        _add(scope, name, table)

    @mcp_app.command("remove")
    def remove_command(
        name: str = typer.Argument(..., help="The server's name."),
        scope: str = typer.Option("", "--scope", help="user | project | mcp-json; by default where it is defined."),
    ) -> None:
        """Remove a server from the file that defines it."""
        from pathlib import Path

        from mini_agent.mcp.edit import remove_from_mcp_json, remove_server

        settings = settings_or_exit([], [])
        defined = next((server for server in settings.mcp_servers if server.name == name), None)
        path = _config_path(scope) if scope in ("user", "project") else Path(defined.source) if defined else None
        if scope == "mcp-json" and defined is not None:
            path = Path(defined.source)
        if path is None:
            fail(f"No MCP server {name} is configured here.")
        try:
            (remove_from_mcp_json if path.suffix == ".json" else remove_server)(path, name)
        except MiniAgentError as exc:
            fail(str(exc))
        print(f"Removed the MCP server {name} from {path}.")


def _add(scope: str, name: str, table: dict) -> None:
    """Write the server's table to the scope's config file, or fail with why."""
    from mini_agent.mcp.edit import add_server

    path = _config_path(scope)
    try:
        add_server(path, name, table)
    except MiniAgentError as exc:
        fail(str(exc))
    print(f"Added the MCP server {name} to {path}.")


def _rows() -> list[dict]:
    from mini_agent.trust import TrustStore

    settings = settings_or_exit([], [])
    store = TrustStore(settings.data_dir)
    return [
        {
            "name": server.name,
            "origin": server.origin,
            "source": server.source,
            "transport": server.transport,
            "definition": server.summary(),
            "trusted": store.trusted(server),
        }
        for server in settings.mcp_servers
    ]


def _config_path(scope: str):
    from pathlib import Path

    from mini_agent.config_files import CONFIG_NAME, PROJECT_DIR, project_config, user_config
    from mini_agent.settings import default_user_dir

    if scope == "user":
        import os

        return user_config(default_user_dir(os.environ))
    if scope in ("project", "local"):  # Claude Code's local scope is this project's, kept out of .mcp.json
        return project_config(Path.cwd()) or Path.cwd() / PROJECT_DIR / CONFIG_NAME
    fail(f"Unknown scope {scope!r}; use user or project (or local).")
    return None
