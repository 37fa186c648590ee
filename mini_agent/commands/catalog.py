"""Custom slash commands: Markdown files whose body, with the arguments put in, becomes the user's prompt.

Where they are found, highest precedence first (the first file to claim a name wins):

    <project>/.mini-agent/commands/     from the working directory up to the repository root, nearest first
                                        (outside a repository: the working directory's only)
    <project>/.claude/commands/         (the same walk; Claude Code's layout, read for compatibility)
    <user dir>/commands/                (MINI_AGENT_HOME or ~/.config/mini-agent)
    ~/.claude/commands/

`review.md` is `/review`; `frontend/build.md` is `/frontend:build`. Files are read when a command is listed,
completed or used, and read again only when their modification time or size changes: never at start-up.
Front matter (command_files.py) may set description, argument-hint, model and allowed-tools. Pure core: no
terminal here.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from mini_agent.commands.files import CommandFile, read_command
from mini_agent.safety.agent_files import definition_dirs

ARGUMENTS_LABEL = "ARGUMENTS:"
_PLACEHOLDER = re.compile(r"\$(\$|ARGUMENTS\b|\d+)")


@dataclass(frozen=True)
class Invocation:
    """One use of a custom command: the prompt to send and what that one turn may do differently."""

    command: CommandFile
    prompt: str


def expand(body: str, arguments: str) -> str:
    """The body with `$ARGUMENTS` (all the arguments as typed) and `$1`, `$2`, … (shell-like words) put in.

    A missing positional argument becomes nothing; `$$` is a literal `$`; any other `$` stays as written. A body
    with no placeholder at all still gets the arguments, on a line of their own at the end, so none are lost.
    """
    arguments = arguments.strip()
    try:
        words = shlex.split(arguments)
    except ValueError:  # an unbalanced quote: plain words, rather than losing the argument
        words = arguments.split()
    used = False

    def put(match: re.Match[str]) -> str:
        nonlocal used
        token = match.group(1)
        if token == "$":
            return "$"
        used = True
        if token == "ARGUMENTS":
            return arguments
        index = int(token)
        return words[index - 1] if 0 < index <= len(words) else ""

    text = _PLACEHOLDER.sub(put, body)
    if arguments and not used:
        text = f"{text.rstrip()}\n\n{ARGUMENTS_LABEL} {arguments}"
    return text


def command_name(directory: Path, path: Path) -> str:
    """`/review` for review.md; `/frontend:build` for frontend/build.md (subdirectories namespace the name)."""
    relative = path.relative_to(directory).with_suffix("")
    return "/" + ":".join(relative.parts)


def search_dirs(cwd: Path, user_dir: Path, home: Path) -> list[tuple[str, Path]]:
    """The command directories, highest precedence first, each with its scope (project or user)."""
    return definition_dirs(cwd, user_dir, home, "commands")


@dataclass
class CommandFinder:
    """The custom commands of a working directory, read lazily and cached by file modification time."""

    cwd: Path
    user_dir: Path
    home: Path = field(default_factory=Path.home)
    reserved: Iterable[str] = ()
    """Built-in command names: a built-in always wins over a file of the same name."""
    extra: Callable[[], dict[str, CommandFile]] | None = None
    """Commands from elsewhere (skills a user may invoke), after the files: a command file wins a name."""
    _cache: dict[Path, tuple[tuple[int, int], CommandFile]] = field(default_factory=dict, repr=False)
    _warned: set[str] = field(default_factory=set, repr=False)

    def commands(self) -> dict[str, CommandFile]:
        """Every usable command by name; the first directory in precedence order to define a name wins."""
        reserved = set(self.reserved)
        chosen: dict[str, CommandFile] = {}
        seen: set[Path] = set()
        for scope, directory in search_dirs(self.cwd, self.user_dir, self.home):
            for path in _markdown_files(directory):
                name = command_name(directory, path)
                if name in chosen or name in reserved:
                    continue
                command = self._read(path, name, scope)
                if command is not None and path not in seen:
                    seen.add(path)
                    chosen[name] = command
        self._cache = {path: entry for path, entry in self._cache.items() if path in seen}
        for name, command in (self.extra() if self.extra is not None else {}).items():
            if name not in chosen and name not in reserved:
                chosen[name] = command
        return chosen

    def shadowed(self) -> list[str]:
        """One warning per file a built-in command hides, the first time it is seen (then never again)."""
        reserved = set(self.reserved)
        warnings = []
        for _, directory in search_dirs(self.cwd, self.user_dir, self.home):
            for path in _markdown_files(directory):
                name = command_name(directory, path)
                if name in reserved and str(path) not in self._warned:
                    self._warned.add(str(path))
                    warnings.append(f"{path}: {name} is a built-in command, which wins over this file.")
        return warnings

    def find(self, line: str) -> Invocation | None:
        """The invocation a `/name args` line makes, or None when no custom command has that name."""
        name, _, arguments = line.strip().partition(" ")
        command = self.commands().get(name) if name.startswith("/") else None
        if command is None:
            return None
        return Invocation(command, expand(command.body, arguments))

    def _read(self, path: Path, name: str, scope: str) -> CommandFile | None:
        try:
            stat = path.stat()
        except OSError:
            return None
        stamp = (stat.st_mtime_ns, stat.st_size)
        cached = self._cache.get(path)
        if cached is not None and cached[0] == stamp and cached[1].name == name:
            return cached[1]
        command = read_command(path, name, scope)
        if command is not None:
            self._cache[path] = (stamp, command)
        return command


def _markdown_files(directory: Path) -> list[Path]:
    """The .md files below a directory, sorted so that names resolve the same way on every run."""
    if not directory.is_dir():
        return []
    found = []
    for root, dirs, files in os.walk(directory, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(Path(root) / name for name in sorted(files) if name.endswith(".md") and not name.startswith("."))
    return found
