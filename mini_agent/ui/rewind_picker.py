"""The two questions of /rewind (and Esc Esc): which prompt to go back to, and what to restore.

Each is one short line read with prompt-toolkit; Esc or Ctrl-C (or Ctrl-D) answers None, which cancels the
rewind with nothing changed. The list of prompts itself is printed by the caller, through the terminal's
sanitiser.
"""

from __future__ import annotations

from collections.abc import Callable

SCOPE_KEYS = {
    "": "both",
    "b": "both",
    "both": "both",
    "1": "both",
    "c": "conversation",
    "conversation": "conversation",
    "2": "conversation",
    "f": "files",
    "files": "files",
    "3": "files",
}

Ask = Callable[[str, str], "str | None"]


def ask_line(question: str, default: str = "") -> str | None:
    """One line typed at `question`; None on Esc, Ctrl-C or Ctrl-D."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.key_binding import KeyBindings

    bindings = KeyBindings()

    @bindings.add("escape", eager=True)
    def _cancel(event) -> None:
        event.app.exit(exception=KeyboardInterrupt)

    try:
        return PromptSession(key_bindings=bindings).prompt(question, default=default)
    except (KeyboardInterrupt, EOFError):
        return None


def pick_prompt(count: int, ask: Ask = ask_line) -> int | None:
    """The number of a prompt, 1 to `count` (Enter: the last one); asked again after an answer that is not one."""
    while True:
        answer = ask(f"Prompt number (1-{count}, Enter: {count}, Esc: cancel): ", "")
        if answer is None:
            return None
        answer = answer.strip() or str(count)
        if answer.isdigit() and 1 <= int(answer) <= count:
            return int(answer)


def pick_scope(ask: Ask = ask_line) -> str | None:
    """both, conversation or files (Enter: both); asked again after an answer that is none of them."""
    while True:
        answer = ask("Restore [b]oth conversation and files, [c]onversation only, [f]iles only? (Enter: both) ", "")
        if answer is None:
            return None
        scope = SCOPE_KEYS.get(answer.strip().lower())
        if scope is not None:
            return scope
