"""The REPL's input line (prompt-toolkit): history, multi-line editing, completion, the mode on Shift+Tab.

Enter sends; Alt+Enter or Esc then Enter inserts a newline; pasted text keeps its newlines (bracketed paste).
Tab completes slash commands and `@path` mentions. Ctrl-O prints the latest reply's thinking in full.
Shift+Tab cycles the permission mode, which the prompt shows; the first move into auto in a session waits for a
`y`, since one key press would otherwise end every question. Esc Esc on an empty line opens /rewind. Ctrl-C clears
the line; Ctrl-D on an empty line exits.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings

MODE_CYCLE = ("default", "accept-edits", "auto", "plan")
ESC_ESC_LINE = "/rewind"
"""What Esc Esc on an empty line sends, as if typed (it is not added to the history)."""
MAX_PATH_COMPLETIONS = 50
SKIPPED_DIRS = {".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".pytest_cache"}


def next_mode(mode: str) -> str:
    """The mode after `mode` in the Shift+Tab cycle (bypass, chosen at start-up, steps into the cycle)."""
    return MODE_CYCLE[(MODE_CYCLE.index(mode) + 1) % len(MODE_CYCLE)] if mode in MODE_CYCLE else MODE_CYCLE[0]


class ModeSwitch:
    """Shift+Tab's cycle through the modes, with a yes before the first move into auto in a session."""

    def __init__(self, get: Callable[[], str], set_mode: Callable[[str], None]) -> None:
        self.get, self.set = get, set_mode
        self.asking = False
        """The prompt is asking whether to switch to auto."""
        self.auto_confirmed = False

    def cycle(self) -> None:
        if self.asking:  # Shift+Tab again at the question: auto is passed over
            self.asking = False
            self.set(next_mode("auto"))
            return
        mode = next_mode(self.get())
        if mode == "auto" and not self.auto_confirmed:
            self.asking = True
            return
        self.set(mode)

    def answer(self, yes: bool) -> None:
        """The answer to "switch to auto?": `y`, or any other key for no (the mode stays)."""
        if self.asking and yes:
            self.auto_confirmed = True
            self.set("auto")
        self.asking = False


class ReplCompleter(Completer):
    """Slash commands at the start of the line; files and directories after an `@`."""

    def __init__(self, commands: Callable[[], Iterable[tuple[str, str]]], cwd: Callable[[], Path]) -> None:
        self.commands, self.cwd = commands, cwd

    def get_completions(self, document: Document, complete_event: CompleteEvent):
        before = document.text_before_cursor
        if before.startswith("/") and " " not in before:
            for name, summary in self.commands():
                if name.startswith(before):
                    yield Completion(name, start_position=-len(before), display_meta=summary)
            return
        word = before.split()[-1] if before and not before[-1].isspace() else ""
        if word.startswith("@"):
            yield from self._paths(word[1:])

    def _paths(self, typed: str):
        base = self.cwd()
        folder, _, prefix = typed.rpartition("/")
        directory = (base / os.path.expanduser(folder)) if folder else base
        try:
            entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        except OSError:
            return
        shown = 0
        for entry in entries:
            if not entry.name.startswith(prefix) or entry.name in SKIPPED_DIRS:
                continue
            if entry.name.startswith(".") and not prefix.startswith("."):
                continue
            is_dir = entry.is_dir(follow_symlinks=True)
            text = f"{folder}/{entry.name}" if folder else entry.name
            yield Completion(
                text + ("/" if is_dir else ""), start_position=-len(typed), display=entry.name + ("/" if is_dir else "")
            )
            shown += 1
            if shown >= MAX_PATH_COMPLETIONS:
                return


def key_bindings(modes: ModeSwitch, show_thinking: Callable[[], None] | None = None) -> KeyBindings:
    from prompt_toolkit.application.current import get_app
    from prompt_toolkit.filters import Condition
    from prompt_toolkit.keys import Keys

    bindings = KeyBindings()
    asking = Condition(lambda: modes.asking)

    @bindings.add("enter")
    def _send(event) -> None:
        event.current_buffer.validate_and_handle()

    @bindings.add("escape", "enter")
    def _newline(event) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add("escape", "escape", filter=Condition(lambda: not get_app().current_buffer.text))
    def _rewind(event) -> None:
        event.app.exit(result=ESC_ESC_LINE)

    if show_thinking is not None:

        @bindings.add("c-o")
        def _thinking(event) -> None:
            from prompt_toolkit.application import run_in_terminal

            run_in_terminal(show_thinking)

    @bindings.add("s-tab")
    def _cycle(event) -> None:
        modes.cycle()
        event.app.invalidate()

    # While the prompt asks about auto, keys answer it and are not typed (the last binding added wins).
    @bindings.add("y", filter=asking)
    @bindings.add("Y", filter=asking)
    def _auto(event) -> None:
        modes.answer(True)
        event.app.invalidate()

    @bindings.add(Keys.Any, filter=asking)
    @bindings.add("enter", filter=asking)
    def _stay(event) -> None:
        modes.answer(False)
        event.app.invalidate()

    return bindings


def prompt_session(history_file: Path, completer: Completer, bindings: KeyBindings) -> PromptSession:
    """A multi-line prompt whose Enter sends; history persists per user in the data directory."""
    history_file.parent.mkdir(parents=True, exist_ok=True)
    return PromptSession(
        history=FileHistory(str(history_file)),
        completer=completer,
        complete_while_typing=False,
        key_bindings=bindings,
        multiline=True,
        enable_history_search=False,
        prompt_continuation=lambda width, line_number, soft_wrap: "· ".rjust(width),
        erase_when_done=True,  # the REPL prints the sent text again, set apart (Repl._echo)
    )
