"""`mini-agent mcp login NAME` and `mini-agent mcp logout NAME`: OAuth for remote MCP servers (mcp/oauth*.py).
The authorization URL comes from the remote server, so it is shown through the terminal sanitiser."""

import sys

import typer

from mini_agent.cli.common import fail, settings_or_exit
from mini_agent.errors import ExitStatus, MiniAgentError
from mini_agent.ui.terminal_text import visible


def register(mcp_app: typer.Typer) -> None:
    @mcp_app.command("login")
    def login_command(
        name: str = typer.Argument(..., help="The remote server's name."),
        browser: bool = typer.Option(
            True, "--browser/--no-browser", help="Open the page in a browser if there is a display."
        ),
        timeout: float = typer.Option(300.0, "--timeout", help="Seconds to wait for the browser to come back."),
    ) -> None:
        """Log in to a remote (http or sse) server that asks for OAuth: open the page it gives, approve, and the
        tokens are kept (privately, in mini-agent's data directory) for every later session."""
        from mini_agent.mcp.oauth_login import LoginFailed, login

        settings, server = _server(name)
        print(visible(f"Logging in to the MCP server {name} at {server.url}."), flush=True)

        def show(url: str) -> None:
            print(visible(f"Open this page to log in (waiting up to {timeout:g} s):\n\n  {url}\n"), flush=True)

        try:
            done = login(server, settings.data_dir, show, settings.secret_set, browser=browser, timeout=timeout)
        except (LoginFailed, MiniAgentError) as exc:
            print(visible(f"mini-agent: logging in to {name} failed: {exc}"), file=sys.stderr)
            raise typer.Exit(ExitStatus.ERROR) from None
        print(visible(f"Logged in to {name}: {done.tools} tool{'s' if done.tools != 1 else ''}."))

    @mcp_app.command("logout")
    def logout_command(name: str = typer.Argument(..., help="The remote server's name.")) -> None:
        """Forget a remote server's OAuth tokens and client registration."""
        from mini_agent.mcp.oauth_login import logout

        settings, server = _server(name)
        if logout(server, settings.data_dir):
            print(visible(f"Logged out of {name}: its tokens are deleted."))
        else:
            print(visible(f"No login of {name} was stored."))


def _server(name: str):
    from mini_agent.trust import TrustStore

    settings = settings_or_exit([], [])
    server = next((server for server in settings.mcp_servers if server.name == name), None)
    if server is None:
        fail(f"No MCP server {name} is configured here (mini-agent mcp list shows those that are).")
    if server.transport == "stdio":
        fail(f"{name} is a stdio server: only remote (http, sse) servers log in.")
    if server.origin != "user" and not TrustStore(settings.data_dir).trusted(server):
        fail(
            f"{name} comes with the project ({server.source}) and is not trusted yet: start a session here and "
            "trust it first."
        )
    return settings, server
