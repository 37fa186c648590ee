"""A plain interactive loop: one turn per line, streamed answers, Ctrl-C aborts a turn, Ctrl-D exits."""

from __future__ import annotations

import sys
from collections.abc import Callable

from mini_agent.agent import Agent
from mini_agent.errors import ExitStatus, MiniAgentError, TurnAborted, redact
from mini_agent.events import AssistantMessage, Event, Notice, ReplyDiscarded, TextDelta, ToolFinished, ToolStarted
from mini_agent.settings import Settings
from mini_agent.ui.confirm import ask_on_terminal
from mini_agent.ui.render import describe_call, first_line


class TerminalRenderer:
    """Streams the model's words as they come, one line per tool call."""

    def __init__(self, console) -> None:
        self.console = console
        self.mid_line = False

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


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def run_interactive(build: Callable[..., Agent], settings: Settings) -> ExitStatus:
    from prompt_toolkit import PromptSession
    from rich.console import Console

    console = Console(highlight=False)
    agent = build(TerminalRenderer(console), ask_on_terminal(sys.stderr))
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
        try:
            agent.run_turn(line)
        except TurnAborted:
            console.print("\n[yellow]Interrupted.[/]")
        except MiniAgentError as exc:
            console.print(f"[red]mini-agent: {_escape(redact(str(exc), settings.secrets))}[/]")
        console.print()
