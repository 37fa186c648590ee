"""Custom slash commands in the REPL (listed in /help, completed with Tab, run as a turn) and in `-p` runs."""

from __future__ import annotations

import difflib
import os
import re
import sys
from collections.abc import Iterable
from typing import TextIO

from mini_agent.app.repl_commands import escape
from mini_agent.commands.catalog import CommandFinder, Invocation
from mini_agent.errors import ConfigError
from mini_agent.settings import Settings
from mini_agent.ui.terminal_text import visible

REPL_BUILTINS = (
    "/help",
    "/clear",
    "/compact",
    "/context",
    "/memory",
    "/cost",
    "/model",
    "/mode",
    "/effort",
    "/trace",
    "/undo",
    "/mcp",
    "/jobs",
    "/skills",
    "/todos",
    "/resume",
    "/rewind",
    "/fork",
    "/init",
    "/exit",
    "/status",
    "/config",
    "/permissions",
    "/doctor",
    "/quit",
)
"""The REPL's own commands, which a file of the same name never replaces; `-p "/name"` honours them too, so a
command means the same in both. tests/test_custom_commands.py checks this against the REPL's table."""


COMMAND_NAME = re.compile(r"/[A-Za-z][\w.:-]*")
"""What a command's name looks like (`/review`, `/frontend:build`); `/etc/hosts` is no name."""


ONE_SHOT_BUILTINS = ("/init",)
"""Built-in commands `-p` runs too (one_shot_prompt); the REPL's others are usage errors there."""


def finder_for(settings: Settings, reserved: Iterable[str] = REPL_BUILTINS) -> CommandFinder:
    """The command files, then the skills a user may type as `/name` (app/skill_commands.py)."""
    from mini_agent.app.skill_commands import SkillCommands

    extra = SkillCommands(settings)
    return CommandFinder(cwd=settings.cwd, user_dir=settings.user_dir, reserved=tuple(reserved), extra=extra)


class CustomCommands:
    """The REPL's view of the command files: names for completion, lines for /help, a turn for a name."""

    def __init__(self, finder: CommandFinder) -> None:
        self.finder = finder
        self._told: set[str] = set()

    def names(self) -> list[tuple[str, str]]:
        return [(name, command.description) for name, command in self.finder.commands().items()]

    def usage_width(self) -> int:
        return max((len(_usage(command)) for command in self.finder.commands().values()), default=0)

    def help_lines(self, width: int = 0) -> tuple[list[str], list[str]]:
        """The commands as /help lists them (their descriptions in one column with the built-ins', `width`
        wide), and the warnings not yet shown (shadowed files, bad front matter)."""
        commands = self.finder.commands()
        lines = []
        width = max([width, *(len(_usage(command)) for command in commands.values())])
        for command in commands.values():
            lines.append(f"{_usage(command):<{width}}  {command.description} ({command.scope})")
        problems = [problem for command in commands.values() for problem in command.problems]
        return lines, self._once(self.finder.shadowed() + problems)

    def find(self, line: str) -> tuple[Invocation | None, list[str]]:
        invocation = self.finder.find(line)
        warnings = self.finder.shadowed()
        if invocation is not None:
            warnings += list(invocation.command.problems)
        return invocation, self._once(warnings)

    def _once(self, warnings: list[str]) -> list[str]:
        fresh = [warning for warning in warnings if warning not in self._told]
        self._told.update(fresh)
        return fresh


def run_in_repl(repl, invocation: Invocation) -> None:
    """The command's prompt as one turn, with its model and allowed-tools for that turn only."""
    from mini_agent.app.rules_setup import command_rules
    from mini_agent.commands.turn import command_turn

    command = command_rules(invocation.command, repl.settings, can_ask=sys.stdin.isatty() and sys.stderr.isatty())
    if command.model:
        repl.console.print(f"[dim]{escape(command.name)} uses the model {escape(command.model)} for this turn[/]")
    with command_turn(repl.agent, command):  # the status line follows the switch (a ModelSwitched event)
        repl._turn(invocation.prompt)


def one_shot_prompt(
    prompt: str, settings: Settings, err: TextIO = sys.stderr, can_ask: bool = False
) -> tuple[str, Settings]:
    """`-p "/name args"`: the expanded prompt, and the run's settings with the command's model and (once a project
    command's are trusted) rules."""
    if not prompt.startswith("/"):
        return prompt, settings
    if prompt.split()[0] == "/init":  # nobody to ask: an existing AGENTS.md is improved, as the prompt says
        from mini_agent.app.init_command import init_prompt

        return init_prompt(settings.cwd, prompt[len("/init") :]), settings
    from mini_agent.commands.turn import one_shot_settings

    finder = finder_for(settings)
    invocation = finder.find(prompt)
    name = prompt.split()[0]
    shadowed = [warning for warning in finder.shadowed() if f": {name} is a built-in" in warning]
    for warning in shadowed + (list(invocation.command.problems) if invocation else []):
        print(visible(f"mini-agent: {warning}"), file=err)
    if invocation is None:
        refuse_unknown(name, finder, settings.cwd)
        return prompt, settings
    from mini_agent.app.rules_setup import command_rules

    return invocation.prompt, one_shot_settings(settings, command_rules(invocation.command, settings, can_ask, err))


def refuse_unless_a_command(prompt: str, settings: Settings) -> None:
    """`-p "/name ..."`: a usage error unless a command file has that name (or the word is a path on disk), or
    it is a built-in that means something in one run (`/init`)."""
    if prompt.split()[0] in ONE_SHOT_BUILTINS:
        return
    finder = finder_for(settings)
    if finder.find(prompt) is None:
        refuse_unknown(prompt.split()[0], finder, settings.cwd)


def refuse_unknown(name: str, finder: CommandFinder, cwd) -> None:
    """`-p "/name ..."` that names no custom command: a REPL command, one of Claude Code's or a misspelling is a
    usage error before any request; only a first word that is a path on disk (`/tmp is full`) goes as text."""
    from mini_agent.app.claude_names import INSTEAD, not_in_one_shot

    if name in REPL_BUILTINS or name in INSTEAD:
        raise ConfigError(not_in_one_shot(name))
    if not COMMAND_NAME.fullmatch(name) or os.path.exists(os.path.join(cwd, name)):
        return
    known = [*finder.commands(), *REPL_BUILTINS]
    near = difflib.get_close_matches(name, known, n=3, cutoff=0.7)
    hint = f" Did you mean {' or '.join(near)}?" if near else ""
    raise ConfigError(
        f"No command {name}.{hint} Custom commands are files in .mini-agent/commands/ or .claude/commands/; "
        f"to send text that starts with /, put a space before it: -p ' {name} ...'."
    )


def _usage(command) -> str:
    return f"{command.name} {command.argument_hint}".strip()
