"""What every command line shares: settings from files, environment and flags, and how a usage error ends."""

from __future__ import annotations

import sys

import typer

from mini_agent.errors import ExitStatus, MiniAgentError
from mini_agent.ui.terminal_text import visible


def settings_from(allow: list[str], deny: list[str], **overrides):
    """Settings from the config files, the environment and flags (which win), with notices printed."""
    return resolved_from(allow, deny, **overrides).settings


def resolved_from(allow: list[str], deny: list[str], cwd=None, **overrides):
    """As `settings_from`, with where each setting came from; `cwd`: the project directory (default: here)."""
    from mini_agent.cli.config import resolve

    resolved = resolve(flags=overrides, allow=allow, deny=deny, cwd=cwd)
    for notice in resolved.notices:
        print(visible(f"mini-agent: {notice}"), file=sys.stderr)
    return resolved


def settings_or_exit(allow: list[str], deny: list[str], **overrides):
    try:
        return settings_from(allow, deny, **overrides)
    except MiniAgentError as exc:
        print(visible(f"mini-agent: {exc}"), file=sys.stderr)
        raise typer.Exit(int(exc.exit_status)) from None


def environment_of(context: typer.Context):
    """The Environment the command runs in (cli/main.py puts it beside the options), for a subcommand's output."""
    from mini_agent.app.environment import Environment

    options = context.obj if isinstance(context.obj, dict) else {}
    return options.get("environment") or Environment.of_process()


def fail(message: str) -> None:
    print(visible(f"mini-agent: {message}"), file=sys.stderr)
    raise typer.Exit(ExitStatus.USAGE)
