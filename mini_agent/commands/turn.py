"""The turn a custom command starts: its `model` and `allowed-tools` hold for that turn only, then go.

The command's rules join the gate's as allow rules with the file as their origin, so they widen nothing the
rule syntax does not say: deny and ask rules still come first, and a project's file (like a project's config)
cannot vouch for what is risky in itself. Answers given during the turn ("always allow …") stay afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

from mini_agent.commands.files import CommandFile

if TYPE_CHECKING:
    from mini_agent.agent import Agent


@contextmanager
def command_turn(agent: Agent, command: CommandFile) -> Iterator[None]:
    before = agent.settings.model
    if command.model:
        agent.switch_model(command.model)
    try:
        with agent.gate.also_allowing(command.rules):
            yield
    finally:
        if command.model and agent.settings.model == command.model:
            agent.switch_model(before)


def one_shot_settings(settings, command: CommandFile):
    """A `-p "/name"` run is that one turn: the command's model and rules become the run's settings."""
    model = command.model or settings.model
    return replace(settings, model=model, rules=settings.rules.with_rules(*command.rules.rules))
