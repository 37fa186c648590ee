"""A plain interactive loop: one turn per line, streamed answers, Ctrl-C aborts a turn, Ctrl-D exits.

Slash commands: `/compact [focus]` compacts the conversation now; `/trace` toggles trace mode.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from mini_agent.agent import Agent
from mini_agent.errors import ExitStatus, MiniAgentError, TurnAborted, redact
from mini_agent.events import (
    AssistantMessage,
    Compacted,
    ContextInjected,
    Event,
    Notice,
    ReplyDiscarded,
    TextDelta,
    ToolFinished,
    ToolStarted,
)
from mini_agent.settings import Settings
from mini_agent.ui.confirm import ask_on_terminal
from mini_agent.ui.render import describe_call, first_line


class TerminalRenderer:
    """Streams the model's words as they come, one line per tool call."""

    def __init__(self, console, trace: bool = False) -> None:
        self.console = console
        self.mid_line = False
        self.trace = trace

    def __call__(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self.console.out(event.text, end="", highlight=False)
            self.mid_line = not event.text.endswith("\n")
            return
        if self.mid_line and not isinstance(event, AssistantMessage):
            self.console.out("")
            self.mid_line = False
        if isinstance(event, AssistantMessage) and self.mid_line:
            self.console.out("")
            self.mid_line = False
        elif isinstance(event, ToolStarted):
            self.console.print(f"[cyan]●[/] {_escape(describe_call(event.name, event.input))}", highlight=False)
        elif isinstance(event, ToolFinished):
            if event.result.is_error:
                self.console.print(f"  [red]✗ {_escape(first_line(event.result.content))}[/]", highlight=False)
            else:
                self.console.print(f"  [green]✓[/] [dim]{event.duration:.1f}s[/]", highlight=False)
        elif isinstance(event, ReplyDiscarded):
            self.console.print(f"[yellow]! {_escape(event.reason)} Retrying in {event.delay:.1f}s.[/]", highlight=False)
        elif isinstance(event, Notice):
            self.console.print(f"[yellow]! {_escape(event.text)}[/]", highlight=False)
        elif isinstance(event, Compacted):
            from mini_agent.ui.trace import format_compaction

            self.console.print(f"[yellow]! {_escape(format_compaction(event.report))}[/]", highlight=False)
        elif isinstance(event, ContextInjected) and self.trace:
            from mini_agent.ui.trace import format_trace

            for line in format_trace(event.trace):
                self.console.print(f"[dim]{_escape(line)}[/]", highlight=False)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def run_interactive(build: Callable[..., Agent], settings: Settings) -> ExitStatus:
    from prompt_toolkit import PromptSession
    from rich.console import Console

    console = Console(highlight=False)
    renderer = TerminalRenderer(console, settings.trace)
    agent = build(renderer, ask_on_terminal(sys.stderr))
    prompt_session: PromptSession = PromptSession()
    console.print(f"[bold]mini-agent[/] · {settings.model} · mode {settings.permission_mode} · Ctrl-D to exit")
    while True:
        try:
            line = prompt_session.prompt("› ")
        except KeyboardInterrupt:
            continue
        except EOFError:
            return ExitStatus.SUCCESS
        if not line.strip():
            continue
        command = line.strip().split(maxsplit=1)
        if command[0] == "/trace":
            renderer.trace = not renderer.trace
            console.print(f"[dim]trace {'on' if renderer.trace else 'off'}[/]")
            continue
        try:
            if command[0] == "/compact":
                agent.keeper.compact_now(agent.session, agent.emit, command[1] if len(command) > 1 else None)
            else:
                agent.run_turn(line)
        except (TurnAborted, KeyboardInterrupt):
            console.print("\n[yellow]Interrupted.[/]")
        except MiniAgentError as exc:
            console.print(f"[red]mini-agent: {_escape(redact(str(exc), settings.secrets))}[/]")
        console.print()
