"""`mini-agent "fix the bug"`: words that name no subcommand are a prompt, as `claude "..."` and `codex "..."` take one.

The root command is a group (config, mcp, undo, ...), so click would read any first word as a subcommand's name
and fail with "No such command". This group looks first: when the first word left after the root's options is a
subcommand's name it stays that subcommand; otherwise every word left (options may come before, between or
after them) is the prompt, joined with spaces, and handed to the root command in `context.meta[PROMPT]`. A single
word close to a subcommand's name (`mini-agent confg`) is a usage error naming it, not a paid request; `--`
before it sends it as a prompt all the same. What the prompt then does (the REPL's first turn, or a one-shot run
with `-p` or piped input) is cli/main.py's.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable

import typer
from typer.core import TyperGroup

from mini_agent.cli.plain_values import plain

PROMPT = "mini_agent.positional_prompt"
"""Where the positional prompt is kept in the root context's `meta`."""

PRINT_ALONE = "\0print"
"""`-p` given with no text of its own (`mini-agent "task" -p`, `echo task | mini-agent -p`): the prompt is the
positional one or piped stdin, as `claude -p` takes it."""


class PromptOrCommand(TyperGroup):
    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:
        plain(self, ctx)  # the root's options read without pydantic (cli/plain_values.py)
        words = self._words(ctx, args)
        if words is None or not words or words[0] in self.commands:
            return super().parse_args(ctx, args)  # click reports a bad option; a subcommand stays one
        dashes = "--" in args and args.index("--") < len(args) - len(words)
        close = difflib.get_close_matches(words[0], list(self.commands), n=1, cutoff=0.75)
        if len(words) == 1 and close and not dashes:
            ctx.fail(
                f"No such command {words[0]!r}. Did you mean {close[0]!r}? "
                f"To send it to the model as a prompt: mini-agent -- {words[0]}"
            )
        ctx.allow_interspersed_args = True  # the root's options after the prompt still apply
        rest = super(TyperGroup, self).parse_args(ctx, args)  # a plain command's: every word left is kept
        ctx.meta[PROMPT] = " ".join(rest)
        ctx.args = []
        return []

    def _words(self, ctx: typer.Context, args: list[str]) -> list[str] | None:
        """The words left after the root's options, from a dry parse that runs no option's callback; None when
        the options themselves are wrong (the real parse says how)."""
        parser = self.make_parser(ctx)
        parser.allow_interspersed_args = False  # stop at the first word, as the real parse of a group does
        try:
            _, words, _ = parser.parse_args(list(args))
        except Exception:  # typer's own click's usage errors: the real parse below raises and reports it
            return None
        return words


def print_alone(argv: list[str], option_names: Callable[[], set[str]]) -> list[str]:
    """`-p`/`--print` with no text after it (the end, or another of the root's options next) gets PRINT_ALONE as
    its value; a prompt that merely starts with a dash (`-p "-v is broken"`) stays the prompt. `option_names` is
    asked only then: building typer's command to list them costs ~25 ms of a one-shot run's start."""
    fixed = list(argv)
    for index, word in enumerate(fixed):
        if word in ("-p", "--print"):
            following = fixed[index + 1] if index + 1 < len(fixed) else None
            if (
                following is None
                or following == "--"
                or (following.startswith("-") and following.split("=", 1)[0] in option_names())
            ):
                fixed.insert(index + 1, PRINT_ALONE)
            break
        if word == "--":
            break
    return fixed
