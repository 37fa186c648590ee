"""The REPL's MCP commands: `/mcp` (each server's status and what it offers), `/mcp reconnect [NAME]` (start a
failed or hung server again without leaving the session; its tools are offered again and the model's
tool_degraded hint goes once it is back), and the servers' prompts as `/mcp__<server>__<prompt>` commands
(mcp/prompts.py), listed in /help and completed with Tab."""

from __future__ import annotations

from mini_agent.errors import ConfigError
from mini_agent.mcp import prompts
from mini_agent.ui.terminal_text import visible

RECONNECT_WORDS = ("reconnect", "restart")


def mcp_command(repl, argument: str) -> None:
    from mini_agent.ui.mcp_view import status_lines

    words = argument.split()
    manager = repl.agent.mcp
    if words and words[0] in RECONNECT_WORDS and manager is not None:
        reconnect(repl, manager, words[1:])
        return
    if words:
        say(repl, "Usage: /mcp, or /mcp reconnect [NAME]", "yellow")
        return
    for line in status_lines(manager):
        say(repl, line)


def reconnect(repl, manager, names: list[str]) -> None:
    unknown = [name for name in names if name not in manager.connections]
    if unknown:
        known = ", ".join(manager.connections)
        say(repl, f"No MCP server {unknown[0]} (the servers: {known}).", "yellow")
        return
    rows = {row.name: row for row in manager.status()}
    chosen = names or [name for name, row in rows.items() if row.status not in ("ready", "untrusted")]
    if not chosen:
        say(repl, "Every MCP server is connected; /mcp reconnect NAME restarts one anyway.", "dim")
        return
    for name in chosen:
        if rows[name].status == "untrusted":
            say(repl, f"{name} is a project server you did not trust: not started.", "yellow")
            continue
        say(repl, f"Reconnecting {name}…", "dim")
        manager.reconnect(name)
    for name in chosen:
        connection = manager.connections[name]
        if rows[name].status == "untrusted":
            continue
        if connection.wait_ready(repl.settings.mcp_timeout):
            row = next(row for row in manager.status() if row.name == name)
            offered = f"{len(row.tools)} tools, {row.resources} resources, {len(row.prompts)} prompts"
            say(repl, f"{name} connected ({offered}).")
        elif connection.status == "failed":
            say(repl, f"{name} failed: {connection.error}", "red")
        else:
            say(repl, f"{name} is still starting; /mcp shows when it is ready.", "yellow")


def prompt_entries(repl) -> list[tuple[str, str, str]]:
    """(name, usage, summary) of every server prompt, for /help and completion; none before the agent is built
    (or in a REPL that has none)."""
    agent = getattr(repl, "built", None)
    manager = agent.mcp if agent is not None else None
    return [(command.name, command.usage, command.summary) for command in prompts.commands(manager)]


def run_prompt(repl, line: str) -> bool:
    """A line naming a server's prompt runs it as one turn; False when it names no configured server."""
    server = prompts.named_server(line)
    manager = repl.agent.mcp if server else None
    if manager is None or server not in manager.connections:
        return False
    try:
        prompt = prompts.wait_and_expand(manager, line, repl.settings.mcp_timeout)
    except ConfigError as exc:
        say(repl, repl.settings.secret_set.mask(str(exc)), "yellow")
        return True
    say(repl, prompt.shown, "dim")
    repl._turn(prompt.turn)
    return True


def say(repl, text: str, style: str | None = None) -> None:
    """A line as it is: no markup read in it, its control characters named (the terminal chokepoint)."""
    repl.console.print(visible(text), style=style, markup=False, highlight=False)
