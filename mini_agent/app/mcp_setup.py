"""MCP servers at start-up: the trust question for a project's servers (asked here, on the terminal, or refused
with a one-line notice when nobody can answer), and the manager joined to the agent: its tools into the
registry, its failures into notices and tool_degraded hints.

The question comes before anything else (`screen`); the manager is made apart from it (`manager_for`): the REPL
has its agent's build make it behind the first prompt, as its connections, the tool machinery and the secret
set they mask with are ~20 ms of imports and work the prompt does not need."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

from mini_agent.mcp.servers import ServerDef
from mini_agent.settings import Settings
from mini_agent.ui.terminal_text import visible
from mini_agent.ui.trust_question import ask_to_trust

if TYPE_CHECKING:
    from mini_agent.mcp.manager import McpManager

TRUST_FLAG = "--trust-project-mcp"
TRUST_KEY = "trust_project_mcp = true"


def screen(settings: Settings, can_ask: bool, err: TextIO | None = None) -> frozenset[str]:
    """Decide which project servers may run: trusted before, allowed by flag or config, or a human's yes now
    (asked on `err`'s terminal when `can_ask`). Returns the names left out, each told in a notice."""
    project = [server for server in settings.mcp_servers if server.origin != "user"]  # the user's own: trusted
    if not project or settings.trust_project_mcp:
        return frozenset()
    from mini_agent.trust import TrustStore

    err = err or sys.stderr
    trust = TrustStore(settings.data_dir)
    ask = _asker(err) if can_ask else None
    untrusted = []
    for server in project:
        if trust.trusted(server):
            continue
        if ask is not None and ask(server):
            trust.trust(server)
            continue
        untrusted.append(server.name)
        how = (
            "you declined to trust it"
            if ask is not None
            else f"nobody can be asked here; run in a terminal to answer, pass {TRUST_FLAG}, or set {TRUST_KEY} "
            "in your user config"
        )
        print(visible(f"mini-agent: MCP server {server.name} ({server.source}) not started: {how}."), file=err)
    return frozenset(untrusted)


def manager_for(settings: Settings, untrusted: frozenset[str]) -> McpManager:
    """The session's manager of its servers, those left out by `screen` never started."""
    from mini_agent.mcp.manager import McpManager

    return McpManager(
        settings.mcp_servers,
        settings.secret_set,
        call_timeout=settings.mcp_call_timeout,
        data_dir=settings.data_dir,
        untrusted=untrusted,
    )


def join(agent, manager: McpManager) -> None:
    """The agent built with `manager`: tools the servers list join its registry; failures reach the human and
    the model."""
    from mini_agent.mcp.health import reporter
    from mini_agent.tools.deferred import DeferredTools

    agent.registry.defer_extra(DeferredTools(agent.registry))  # past the budget: found with tool_search
    manager.bind(agent.registry.replace_extra, reporter(agent))


def wait_for_servers(agent, manager: McpManager, timeout: float) -> None:
    """A one-shot run: the first request lists the tools of the servers ready by then; late ones join later."""
    from mini_agent.events import Notice

    late = manager.wait_ready(timeout)
    agent.registry.replace_extra(manager.tools())
    if late:
        names = ", ".join(late)
        agent.emit(
            Notice(
                f"MCP server{'s' if len(late) > 1 else ''} {names} not ready after {timeout:g} s: going on, "
                "and their tools join when ready (mcp_timeout sets the wait)."
            )
        )


def one_shot_prompt(manager: McpManager | None, prompt: str, timeout: float) -> str | None:
    """`-p "/mcp__server__prompt args"`: the turn the server's prompt stands for, or None when the prompt names
    no configured server. ConfigError when the prompt cannot be had."""
    from mini_agent.mcp import prompts

    server = prompts.named_server(prompt)
    if manager is None or server not in manager.connections:
        return None
    return prompts.wait_and_expand(manager, prompt, timeout).turn


def _asker(err: TextIO):
    def ask(server: ServerDef) -> bool:
        heading = f"The project defines the MCP server {server.name} ({server.source}), which runs:"
        return ask_to_trust(err, heading, [server.summary()], f"Trust and start {server.name}?")

    return ask
