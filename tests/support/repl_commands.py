"""The REPL's own commands over an agent built by the one builder, in process: what `launch` makes for the REPL,
with its console writing to a string."""

from __future__ import annotations

import io
from types import SimpleNamespace

from mini_agent.app.build import AgentBuilder
from mini_agent.app.lifecycle import SessionLifecycle
from mini_agent.app.repl_commands import builtin_commands
from mini_agent.model import AnthropicProvider
from mini_agent.safety.permissions import Allow
from mini_agent.ui.console import ReplRenderer


def built(settings, warm_up: bool = False, hooks=None, confirm=None):
    """The agent, a REPL namespace holding it and its commands, and the session lifecycle. `warm_up`: ask the
    endpoint about the model first, as the REPL does once its prompt is drawn. `hooks`: a `hooks.Hooks`;
    `confirm`: who answers questions (by default a yes to each)."""
    from rich.console import Console

    provider = AnthropicProvider(settings, sleep=lambda seconds: None)
    if warm_up:
        provider.warm_up()
    sessions = SessionLifecycle(settings)
    console = Console(file=io.StringIO(), width=100)
    renderer = ReplRenderer(console, model=settings.model)
    agent = AgentBuilder(settings, provider, sessions, hooks=hooks)(renderer, confirm or (lambda request: Allow()))
    repl = SimpleNamespace(agent=agent, console=console, renderer=renderer, settings=settings, sessions=sessions)
    repl.commands = builtin_commands(repl)
    return agent, repl, sessions
