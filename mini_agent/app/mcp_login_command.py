"""`/mcp login NAME` in the REPL: the OAuth login `mini-agent mcp login` runs (mcp/oauth_login.py), then the
server started again with its new tokens, so its tools join from the next request on. The authorization URL
comes from the remote server: it is shown through the terminal sanitiser, unwrapped so it can be copied."""

from __future__ import annotations

from rich.markup import escape

from mini_agent.errors import MiniAgentError
from mini_agent.ui.terminal_text import visible

USAGE = "Usage: /mcp login NAME (a remote server that needs login)"


def login_command(repl, words: list[str]) -> None:
    from mini_agent.mcp.oauth_login import LOGIN_TIMEOUT, LoginFailed, login

    manager = repl.agent.mcp
    connection = manager.connections.get(words[0]) if manager is not None and len(words) == 1 else None
    if connection is None:
        repl.console.print(f"[yellow]{escape(USAGE)}[/]")
        return
    name = connection.server.name
    if connection.status == "untrusted":
        repl.console.print(f"[yellow]{escape(name)} is not trusted in this session: it is not started.[/]")
        return

    def show(url: str) -> None:
        repl.console.print(
            escape(visible(f"Open this page to log in to {name} (waiting up to {LOGIN_TIMEOUT:g} s, Ctrl-C stops):")),
            highlight=False,
        )
        repl.console.print(escape(visible(url)), highlight=False, soft_wrap=True)

    try:
        done = login(connection.server, repl.settings.data_dir, show, repl.settings.secret_set)
    except (LoginFailed, MiniAgentError) as exc:
        repl.console.print(f"[yellow]{escape(visible(f'Logging in to {name} failed: {exc}'))}[/]")
        return
    except KeyboardInterrupt:
        repl.console.print("[dim]Login stopped.[/]")
        return
    repl.console.print(f"[dim]Logged in to {escape(name)} ({done.tools} tools); connecting again.[/]")
    connection.stop()
    connection.start()
