"""What a script runs: its simple commands, each with its words, assignments, redirects and surroundings."""

from __future__ import annotations

from dataclasses import dataclass

from mini_agent.safety.shell.words import Word


@dataclass(frozen=True)
class Redirect:
    operator: str
    """`>`, `>>`, `&>`, `&>>`, `>|`, `>&`, `<`, `<>`, `<<`, `<<-`, `<<<`, ..."""
    target: Word | None
    """The file or descriptor; None for heredocs."""
    body: str | None = None
    """Text a heredoc or here-string feeds to stdin, when it is known before running."""
    text: str = ""
    """As shown to the human: `2> /dev/null`, `>&2`, `<<EOF`."""


@dataclass(frozen=True)
class Assignment:
    name: str
    value: Word | None
    """None for arrays and appends, whose value is not one static word."""


@dataclass(frozen=True)
class Command:
    """One simple command and the circumstances it runs in."""

    words: tuple[Word, ...]
    """The command name and its arguments; empty for a bare assignment or redirection."""
    assignments: tuple[Assignment, ...] = ()
    """`NAME=value` prefixes, or the assignments of a bare assignment / export / declare."""
    redirects: tuple[Redirect, ...] = ()
    upstream: tuple[Command, ...] = ()
    """Commands of the earlier pipeline stages, whose output this command reads."""
    piped: bool = False
    """stdin is a pipe (from an earlier stage, or inherited by a script passed to `bash -c`)."""
    in_pipeline: bool = False
    background: bool = False
    function: str | None = None
    """The function whose body holds this command."""
    declaration: bool = False
    """export / declare / local / readonly / typeset: its assignments outlive the command."""
    evaluates: str | None = None
    """How the command makes bash evaluate a variable's value as code (see evaluation.py), or None."""
    code_in_variables: bool = False
    """A variable assigned earlier in the script holds text with `$(...)`, backticks or `$`: evaluating it runs
    that code."""


@dataclass(frozen=True)
class Script:
    commands: tuple[Command, ...]
    functions: frozenset[str]
    parsed: bool
    """False when tree-sitter reported errors or missing nodes, or the tree was too deep to walk."""
