"""The interactive REPL: one turn per input, streamed Markdown answers, slash commands, undo, sessions.

Ctrl-C clears the line, or during a turn aborts it (the running command is killed) and returns to the prompt
with the session intact; Ctrl-D exits. Every turn is written to the session file as it happens.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from mini_agent import gc_pause, threads
from mini_agent.app.claude_names import instead
from mini_agent.app.repl_commands import builtin_commands, escape, memory, unicode_console
from mini_agent.app.resumed_notice import ResumedNotice
from mini_agent.errors import ExitStatus, MiniAgentError, TurnAborted
from mini_agent.settings import Settings

if TYPE_CHECKING:
    from mini_agent.agent import Agent


class Repl:
    def __init__(self, build: Callable[..., Agent], settings: Settings, sessions) -> None:
        from mini_agent.app.agent_build import AgentBuild
        from mini_agent.ui.console import ReplRenderer
        from mini_agent.ui.terminal_text import terminal_console

        self.settings, self.sessions = settings, sessions
        from mini_agent.ui.spacing import Lines, TrackedStream

        self.lines = Lines()
        """How the terminal's text ends, seen through both streams: never two blank lines in a row."""
        # control characters in what it prints are shown, emoji codes left as written
        self.console = terminal_console(highlight=False, file=TrackedStream(sys.stdout, self.lines))
        self.renderer = ReplRenderer(self.console, settings.trace, model=settings.model)

        def build_agent(emit) -> Agent:
            from mini_agent.ui.confirm import ask_on_terminal  # with the permission gate: part of the build

            try:
                self.sessions.open()  # --continue's session, read behind the prompt (see ResumedNotice)
            except BaseException as exc:
                self.resumed.read(exc)
                raise
            self.resumed.read()
            ask = ask_on_terminal(TrackedStream(sys.stderr, self.lines))

            def confirm(request):
                with self.renderer.paused():  # no spinner over a question
                    return ask(request)

            return build(emit, confirm)  # with its session and undo (app/build.py)

        self.resumed = ResumedNotice(lambda: self.sessions.notice, self._show_notice)
        if sessions.resume_target:
            sessions.open()  # a session named by id is looked up first: a wrong id stops here, before any prompt
            self.resumed.read()
        self._build = AgentBuild(build_agent, self.renderer)
        from mini_agent.ui.repl_input import ModeSwitch

        self.modes = ModeSwitch(lambda: self.mode, self._set_mode)
        self.modes.auto_confirmed = settings.permission_mode == "auto"  # chosen at start (--yes): asked for already
        self.commands = builtin_commands(self)
        from mini_agent.app.custom_commands import CustomCommands, finder_for

        self.custom = CustomCommands(finder_for(settings, (name for name, _ in self.commands.names())))
        self.next_input = ""
        """What the next prompt starts with (a rewound prompt's words, to edit and send again)."""

    @property
    def agent(self) -> Agent:
        """Built behind the first prompt (agent_build.py); the first use outside the prompt waits for it."""
        return self._build.agent()

    @property
    def built(self) -> Agent | None:
        """The agent if it is built already; never waits."""
        return self._build.ready

    @property
    def mode(self) -> str:
        agent = self._build.ready
        return agent.mode if agent is not None else self.settings.permission_mode

    # ---- the loop -------------------------------------------------------------------------------------------

    def run(self, warm_up: Callable[[], None] | None = None, first: str | None = None) -> ExitStatus:
        """`first`: a prompt given on the command line, handled as if typed at the first prompt."""
        from mini_agent.ui.repl_input import ReplCompleter, key_bindings, prompt_session

        completer = ReplCompleter(lambda: self.commands.names() + self.custom.names() + self._prompt_names(), self._cwd)
        bindings = key_bindings(self.modes, self.renderer.show_thinking)
        session = prompt_session(self.settings.data_dir / "history", completer, bindings)
        self.resumed.above(session)
        self._banner()
        behind: list[threading.Thread] = []

        def build_then_warm_up() -> None:
            if self._build.wait() is not None and warm_up is not None:
                warm_up()  # the MCP servers too

        def after_first_draw() -> None:
            # Called just before the first draw, on prompt-toolkit's loop: what it schedules runs once the draw is
            # out. The build and then the SDK import start there, not before (they would compete with the draw for
            # the interpreter) and not later (a task sent at once waits for both: every idle moment is lost).
            if not behind:
                behind.append(threads.new(build_then_warm_up, name="behind-prompt"))
                asyncio.get_running_loop().call_soon(behind[0].start)

        try:
            if first is not None and first.strip():
                behind.append(threading.current_thread())  # no prompt to draw first: at once, here
                build_then_warm_up()
                self.resumed.show()
                session.history.append_string(first)  # Up recalls it, as if typed
                if self._handle(first):
                    return ExitStatus.SUCCESS
            return self._loop(session, after_first_draw)
        finally:
            self._build.finish()  # a build not begun yet never begins: nothing to build for a session that is over

    def _loop(self, session, after_first_draw: Callable[[], None]) -> ExitStatus:
        while True:
            default, self.next_input = self.next_input, ""
            self.resumed.show(wait=False)  # read while a prompt left with Ctrl-C was up: before the next one
            try:
                line = session.prompt(self._prompt, pre_run=after_first_draw, default=default)
            except KeyboardInterrupt:
                continue
            except EOFError:
                return ExitStatus.SUCCESS
            self._build.start()  # (started by the first draw, unless the line came before it)
            self.resumed.show()  # unless shown above the prompt already
            self._build.show_held()
            gc_pause.resume()  # start-up is over once a line is in, whether or not it asks the model
            if line.strip() and self._handle(line):
                return ExitStatus.SUCCESS

    def _handle(self, line: str) -> bool:
        """One input: a slash command, `!command`, a note, or a turn; True when the REPL should exit."""
        self._echo(line)
        if line.startswith("/"):
            return self._slash(line)
        if line.startswith("!") and line[1:].strip():
            from mini_agent.app.shell_escape import run_shell_escape

            run_shell_escape(self, line[1:])
        elif not self._remembered(line):
            self._turn(line)
        return False

    def _cwd(self) -> str:
        agent = self._build.ready  # asked for inside the prompt (completing an @path): never waits
        return agent.ctx.cwd if agent is not None else self.settings.cwd

    def _prompt(self):
        from prompt_toolkit.formatted_text import HTML

        mode = self.mode
        if self.modes.asking:
            return HTML(f"<ansiyellow>{escape_html(auto_question(mode, self._columns()))}</ansiyellow>\n› ")
        return HTML(f"<ansigray>[{mode}]</ansigray> › ") if mode != "default" else HTML("› ")

    def _columns(self) -> int:
        import shutil

        return shutil.get_terminal_size().columns

    def _banner(self) -> None:
        self.console.print(
            f"[bold]mini-agent[/] · {escape(self.settings.model)} · mode {self.mode} · /help for commands · "
            "Ctrl-D to exit"
        )
        if self.sessions.resume_target:
            self.resumed.show()  # read already: with the banner

    def _show_notice(self, notice: str) -> None:
        self.console.print(f"[dim]{escape(notice)}[/]")

    def _echo(self, line: str) -> None:
        """What the user sent, back in the scrollback in bold behind a cyan marker, a blank line above it (after
        the banner, a command's output) and below it, so each request stands out from the answers around it."""
        from rich.text import Text

        marker = "›" if unicode_console(self.console) else ">"
        self.console.print(self.lines.apart(), end="")
        shown = Text.assemble((f"{marker} ", "bold cyan"), (line.rstrip("\n").replace("\n", "\n  "), "bold"))
        self.console.print(shown, highlight=False)
        self.console.print()

    def _turn(self, line: str) -> None:
        result = None
        try:
            agent = self.agent  # built, and its session attached (undo included), before the turn begins
            self.sessions.undo.begin_turn()
            with self.renderer.turn():
                result = agent.run_turn(line, pasted=True)  # a file dragged in arrives as its path
        except (TurnAborted, KeyboardInterrupt):
            self._interrupted()
        except MiniAgentError as exc:
            # No "mini-agent:" prefix here: in the session it is plain whose words these are, and the advice
            # the error carries (/clear, a bigger window) is for this very prompt.
            self.console.print(f"[red]{escape(self.settings.secret_set.mask(str(exc)))}[/]")
        finally:
            warning = self.sessions.after_turn()
            if warning:
                self.console.print(f"[yellow]! {escape(warning)}[/]")
        if result is not None:
            self.renderer.turn_finished(result, agent.session, agent.window(), agent.context_size())
        self.console.print()

    def _interrupted(self) -> None:
        self.console.print(f"{self.lines.apart()}[yellow]Interrupted.[/]")

    def _set_mode(self, mode: str) -> None:
        agent = self._build.wait()  # Shift+Tab inside the prompt: waits for a build under way, shows nothing
        if agent is not None:
            agent.set_mode(mode)

    # ---- slash commands -------------------------------------------------------------------------------------

    def _slash(self, line: str) -> bool:
        command, argument, suggestion = self.commands.find(line)
        if command is None and (self._custom_command(line) or self._mcp_prompt(line)):
            return False
        if command is None and (answer := instead(line.split()[0])):
            self.console.print(f"[yellow]{escape(line.split()[0])} is Claude Code's. {escape(answer)}[/]")
            return False
        if command is None:
            hint = f" Did you mean {suggestion}?" if suggestion else ""
            self.console.print(f"[yellow]Unknown command {escape(line.split()[0])}.{hint} /help lists them.[/]")
            return False
        try:
            return bool(command.run(argument))
        except (TurnAborted, KeyboardInterrupt):
            self._interrupted()
        except MiniAgentError as exc:
            self.console.print(f"[red]mini-agent: {escape(self.settings.secret_set.mask(str(exc)))}[/]")
        return False

    def _custom_command(self, line: str) -> bool:
        from mini_agent.app.custom_commands import run_in_repl

        invocation, warnings = self.custom.find(line)
        for warning in warnings:
            self.console.print(f"[yellow]! {escape(warning)}[/]")
        if invocation is not None:
            run_in_repl(self, invocation)
        return invocation is not None

    def _mcp_prompt(self, line: str) -> bool:
        from mini_agent.app.mcp_command import run_prompt

        return run_prompt(self, line)

    def _prompt_names(self) -> list[tuple[str, str]]:
        if self.built is None or self.built.mcp is None:
            return []  # no servers, or the agent not built yet: nothing to import
        from mini_agent.app.mcp_command import prompt_entries

        return [(name, summary) for name, _, summary in prompt_entries(self)]

    def _remembered(self, line: str) -> bool:
        """`#note`, "remember ..." or "记住 ..." saves a note instead of starting a turn (as Claude Code's `#` does):
        the model sees it in the user memory block from the next turn on."""
        from mini_agent.context.memory import note_from_hash, note_from_prompt

        note = note_from_hash(line) or note_from_prompt(line)
        if note is None:
            return False
        memory(self, f"add {note}")
        return True


def run_interactive(
    build: Callable[..., Agent],
    settings: Settings,
    sessions,
    warm_up: Callable[[], None] | None = None,
    first: str | None = None,
) -> ExitStatus:
    """`warm_up` (loading the model SDK) starts once the first prompt is drawn; `first` is sent before it."""
    reason = "other"  # a crash
    try:
        status = Repl(build, settings, sessions).run(warm_up, first)
        reason = "prompt_input_exit"  # Ctrl-D, /exit, /quit
        return status
    finally:
        sessions.end(reason)


def auto_question(mode: str, columns: int) -> str:
    """The Shift+Tab question, wrapped to the terminal: the keys first, so no width hides what to press."""
    import textwrap

    keys = f"Switch to auto? y: switch · any other key: stay in {mode} · Shift+Tab: skip to plan"
    why = "Edits and commands run without asking (destructive ones and secrets leaving still ask)."
    width = max(20, columns - 1)
    return "\n".join([*textwrap.wrap(keys, width, break_on_hyphens=False), *textwrap.wrap(why, width)])


def escape_html(text: str) -> str:
    from html import escape as html_escape

    return html_escape(text, quote=False)
