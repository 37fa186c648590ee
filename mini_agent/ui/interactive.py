"""The interactive REPL: one turn per input, streamed Markdown answers, slash commands, undo, sessions.

Ctrl-C clears the line, or during a turn aborts it (the running command is killed) and returns to the prompt
with the session intact; Ctrl-D exits. Every turn is written to the session file as it happens.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import replace

from mini_agent.agent import Agent
from mini_agent.errors import ExitStatus, MiniAgentError, TurnAborted
from mini_agent.settings import PERMISSION_MODES, Settings
from mini_agent.ui.confirm import ask_on_terminal
from mini_agent.ui.slash import SlashCommands

WARM_UP_DELAY = 0.1
"""Seconds after the prompt starts before the SDK import begins: long enough for the first draw."""
MODELS_SHOWN = 20
"""Model ids `/model` prints before it says how many more the endpoint lists."""


class Repl:
    def __init__(self, build: Callable[..., Agent], settings: Settings, sessions) -> None:
        from rich.console import Console

        from mini_agent.ui.console import ReplRenderer

        self.settings, self.sessions = settings, sessions
        self.console = Console(highlight=False)
        self.renderer = ReplRenderer(self.console, settings.trace, model=settings.model)
        ask = ask_on_terminal(sys.stderr)

        def confirm(request):
            with self.renderer.paused():  # no spinner over a question
                return ask(request)

        self.agent = build(self.renderer, confirm)
        self.sessions.attach(self.agent)
        from mini_agent.ui.repl_input import ModeSwitch

        self.modes = ModeSwitch(lambda: self.agent.mode, self._set_mode)
        self.modes.auto_confirmed = self.agent.mode == "auto"  # chosen at start (--yes): asked for already
        self.commands = self._commands()
        from mini_agent.ui.custom_commands import CustomCommands, finder_for

        self.custom = CustomCommands(finder_for(settings, (name for name, _ in self.commands.names())))
        self._spaced_above = False
        """Whether the last output ended with a blank line (a turn's does; the banner and commands' do not)."""

    # ---- the loop -------------------------------------------------------------------------------------------

    def run(self, warm_up: Callable[[], None] | None = None) -> ExitStatus:
        from mini_agent.ui.repl_input import ReplCompleter, key_bindings, prompt_session

        completer = ReplCompleter(lambda: self.commands.names() + self.custom.names(), lambda: self.agent.ctx.cwd)
        session = prompt_session(self.settings.data_dir / "history", completer, key_bindings(self.modes))
        self._banner()
        pending = [warm_up] if warm_up else []

        def after_first_draw() -> None:
            if pending:
                threading.Timer(WARM_UP_DELAY, pending.pop()).start()

        while True:
            try:
                line = session.prompt(self._prompt, pre_run=after_first_draw)
            except KeyboardInterrupt:
                continue
            except EOFError:
                return ExitStatus.SUCCESS
            if not line.strip():
                continue
            self._echo(line)
            if line.startswith("/"):
                self._spaced_above = False
                if self._slash(line):
                    return ExitStatus.SUCCESS
                continue
            if self._remembered(line):
                self._spaced_above = False  # a note's confirmation, like a command's output, ends without one
            else:
                self._turn(line)
                self._spaced_above = True

    def _prompt(self):
        from prompt_toolkit.formatted_text import HTML

        mode = self.agent.mode
        if self.modes.asking:
            return HTML(
                "<ansiyellow>Switch to auto? Edits and commands run without asking (destructive ones and secrets "
                "leaving still ask). y: switch · any other key: stay in {mode} · Shift+Tab: skip to plan</ansiyellow>"
                "\n› ".replace("{mode}", mode)
            )
        return HTML(f"<ansigray>[{mode}]</ansigray> › ") if mode != "default" else HTML("› ")

    def _banner(self) -> None:
        resumed = self.sessions.notice
        self.console.print(
            f"[bold]mini-agent[/] · {self.agent.settings.model} · mode {self.agent.mode} · "
            "/help for commands · Ctrl-D to exit"
        )
        if resumed:
            self.console.print(f"[dim]{_escape(resumed)}[/]")

    def _echo(self, line: str) -> None:
        """What the user sent, back in the scrollback in bold behind a cyan marker, a blank line above it (after
        the banner, a command's output) and below it, so each request stands out from the answers around it."""
        from rich.text import Text

        marker = "›" if _unicode(self.console) else ">"
        if not self._spaced_above:
            self.console.print()
        shown = Text.assemble((f"{marker} ", "bold cyan"), (line.rstrip("\n").replace("\n", "\n  "), "bold"))
        self.console.print(shown, highlight=False)
        self.console.print()

    def _turn(self, line: str) -> None:
        self.sessions.undo.begin_turn()
        result = None
        try:
            with self.renderer.turn():
                result = self.agent.run_turn(line)
        except (TurnAborted, KeyboardInterrupt):
            self.console.print("\n[yellow]Interrupted.[/]")
        except MiniAgentError as exc:
            # No "mini-agent:" prefix here: in the session it is plain whose words these are, and the advice
            # the error carries (/clear, a bigger window) is for this very prompt.
            self.console.print(f"[red]{_escape(self.settings.secret_set.mask(str(exc)))}[/]")
        finally:
            warning = self.sessions.after_turn()
            if warning:
                self.console.print(f"[yellow]! {_escape(warning)}[/]")
        if result is not None:
            self.renderer.turn_finished(result, self.agent.session, self.agent.window(), self.agent.overhead())
        self.console.print()

    def _set_mode(self, mode: str) -> None:
        self.agent.mode = mode

    # ---- slash commands -------------------------------------------------------------------------------------

    def _slash(self, line: str) -> bool:
        command, argument, suggestion = self.commands.find(line)
        if command is None and self._custom_command(line):
            return False
        if command is None:
            hint = f" Did you mean {suggestion}?" if suggestion else ""
            self.console.print(f"[yellow]Unknown command {_escape(line.split()[0])}.{hint} /help lists them.[/]")
            return False
        try:
            return bool(command.run(argument))
        except (TurnAborted, KeyboardInterrupt):
            self.console.print("\n[yellow]Interrupted.[/]")
        except MiniAgentError as exc:
            self.console.print(f"[red]mini-agent: {_escape(self.settings.secret_set.mask(str(exc)))}[/]")
        return False

    def _commands(self) -> SlashCommands:
        commands = SlashCommands()
        commands.add("/help", "/help", "list the commands and keys", self._help)
        commands.add("/clear", "/clear", "start a new conversation", self._clear)
        commands.add("/compact", "/compact [focus]", "compact the conversation now", self._compact)
        commands.add("/context", "/context", "tokens by part of the context window", self._context)
        commands.add("/memory", "/memory [add NOTE]", "show the user memory file, or add a note to it", self._memory)
        commands.add("/cost", "/cost", "tokens and money spent in this session", self._cost)
        commands.add("/model", "/model [name]", "show or switch the model", self._model)
        commands.add("/mode", "/mode [name]", "show or set the permission mode (Shift+Tab cycles)", self._mode)
        commands.add("/trace", "/trace on|off", "show what context each turn adds", self._trace)
        commands.add("/undo", "/undo", "restore the files the last turn changed", self._undo)
        commands.add("/resume", "/resume [id]", "continue an earlier session of this directory", self._resume)
        commands.add("/mcp", "/mcp", "MCP servers: status, tools, errors", self._mcp)
        commands.add("/exit", "/exit", "leave (Ctrl-D too)", lambda argument: True)
        return commands

    def _custom_command(self, line: str) -> bool:
        from mini_agent.ui.custom_commands import run_in_repl

        invocation, warnings = self.custom.find(line)
        for warning in warnings:
            self.console.print(f"[yellow]! {_escape(warning)}[/]")
        if invocation is not None:
            run_in_repl(self, invocation)
        return invocation is not None

    def _help(self, argument: str) -> None:
        for line in self.commands.help_lines():
            self.console.print(_escape(line), highlight=False)
        custom, warnings = self.custom.help_lines()
        for line in custom:
            self.console.print(_escape(line), highlight=False)
        for warning in warnings:
            self.console.print(f"[yellow]! {_escape(warning)}[/]")
        self.console.print(
            "[dim]Enter sends · Alt+Enter or Esc Enter: new line · Tab completes /commands and @paths · "
            "Shift+Tab cycles the mode · Ctrl-C clears or interrupts · Ctrl-D exits[/]"
        )

    def _clear(self, argument: str) -> None:
        self.sessions.start_new(self.agent)
        self.console.print("[dim]New conversation.[/]")

    def _compact(self, argument: str) -> None:
        with self.renderer.turn():
            self.agent.keeper.compact_now(self.agent.session, self.agent.emit, argument or None)

    def _context(self, argument: str) -> None:
        from mini_agent.ui.context_view import context_lines

        for line in context_lines(self.agent, ascii_only=not _unicode(self.console)):
            self.console.print(_escape(line), highlight=False)

    def _remembered(self, line: str) -> bool:
        """ "remember ..." / "记住 ..." saves a note instead of starting a turn (as Claude Code's `#` does): the
        model sees it in the user memory block from the next turn on."""
        from mini_agent.context.memory import note_from_prompt

        note = note_from_prompt(line)
        if note is None:
            return False
        self._memory(f"add {note}")
        return True

    def _memory(self, argument: str) -> None:
        from mini_agent.ui.memory_view import memory_command

        memory_command(self.agent, self.console, argument)

    def _cost(self, argument: str) -> None:
        from mini_agent.ui.context_view import cost_lines

        for line in cost_lines(self.agent.settings.model, self.agent.session.usage):
            self.console.print(_escape(line), highlight=False)

    def _model(self, argument: str) -> None:
        """`/model`: the model in use and those the endpoint lists; `/model NAME` switches, warning on a name the
        endpoint does not list (it may still know it: some list only a few)."""
        listed = self.agent.provider.list_models()
        if argument:
            if listed and argument not in listed:
                self.console.print(
                    f"[yellow]{_escape(argument)} is not among the models {_escape(self.settings.base_url)} lists; "
                    "using it anyway (see /model for the list).[/]"
                )
            self.agent.settings = replace(self.agent.settings, model=argument)
            self.renderer.model = argument
        self.console.print(f"model {_escape(self.agent.settings.model)}")
        if listed and not argument:
            more = f", … ({len(listed)} in all)" if len(listed) > MODELS_SHOWN else ""
            shown = ", ".join(listed[:MODELS_SHOWN]) + more
            self.console.print(_escape(f"the endpoint lists: {shown}"), highlight=False)

    def _mode(self, argument: str) -> None:
        if argument:
            if argument not in PERMISSION_MODES:
                self.console.print(f"[yellow]Unknown mode {_escape(argument)}; use {', '.join(PERMISSION_MODES)}.[/]")
                return
            self.agent.mode = argument
        self.console.print(f"mode {self.agent.mode}")

    def _trace(self, argument: str) -> None:
        if argument in ("on", "off"):
            self.renderer.trace = argument == "on"
        elif not argument:
            self.renderer.trace = not self.renderer.trace
        self.console.print(f"[dim]trace {'on' if self.renderer.trace else 'off'}[/]")

    def _mcp(self, argument: str) -> None:
        from mini_agent.ui.mcp_view import status_lines

        for line in status_lines(self.agent.mcp):
            self.console.print(_escape(line), highlight=False)

    def _undo(self, argument: str) -> None:
        for line in self.sessions.undo_last(self.agent):
            self.console.print(_escape(line), highlight=False)

    def _resume(self, argument: str) -> None:
        message = self.sessions.resume(self.agent, argument or None, self.console)
        if message:
            self.console.print(f"[dim]{_escape(message)}[/]")


def run_interactive(
    build: Callable[..., Agent], settings: Settings, sessions, warm_up: Callable[[], None] | None = None
) -> ExitStatus:
    """`warm_up` (loading the model SDK) starts once the first prompt is drawn."""
    try:
        return Repl(build, settings, sessions).run(warm_up)
    finally:
        sessions.close()


def _unicode(console) -> bool:
    return (console.encoding or "").lower().replace("-", "").startswith("utf")


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
