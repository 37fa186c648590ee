"""Slash commands: a name, a line of help and a handler; unknown names get the nearest match suggested."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class SlashCommand:
    name: str
    usage: str
    summary: str
    run: Callable[[str], bool | None]
    """Takes the argument text; returns True when the REPL should exit."""


class SlashCommands:
    def __init__(self) -> None:
        self._commands: dict[str, SlashCommand] = {}

    def add(self, name: str, usage: str, summary: str, run: Callable[[str], bool | None]) -> None:
        self._commands[name] = SlashCommand(name, usage, summary, run)

    def names(self) -> list[tuple[str, str]]:
        return [(command.name, command.summary) for command in self._commands.values()]

    def usage_width(self) -> int:
        return max(len(command.usage) for command in self._commands.values())

    def help_lines(self, width: int = 0) -> list[str]:
        width = max(width, self.usage_width())
        return [f"{command.usage:<{width}}  {command.summary}" for command in self._commands.values()]

    def find(self, line: str) -> tuple[SlashCommand | None, str, str | None]:
        """The command a line names, its argument, and a suggestion when the name is unknown."""
        name, _, argument = line.strip().partition(" ")
        command = self._commands.get(name)
        if command is not None:
            return command, argument.strip(), None
        close = difflib.get_close_matches(name, list(self._commands), n=1, cutoff=0.5)
        prefixed = [known for known in self._commands if known.startswith(name)] if len(name) > 1 else []
        suggestion = close[0] if close else (prefixed[0] if prefixed else None)
        return None, argument.strip(), suggestion
