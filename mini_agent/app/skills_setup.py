"""Skill folders changed during an earlier session, at start-up: on a terminal the human is asked whether to offer
them to the model again (the same question as instruction files the agent wrote); without one they stay withheld,
with a notice. See context/skill_trust.py for what is remembered and why."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO

from mini_agent.context.instruction_trust import trust, written
from mini_agent.settings import Settings

OFFERED = "The model will be offered them and follow what they say."


def prepare(settings: Settings, can_ask: bool, err: TextIO | None = None) -> None:
    err = err or sys.stderr
    if not written(settings.data_dir):
        return  # the usual case: one small read, no skill folder looked at
    from mini_agent.skills.catalog import find_skills
    from mini_agent.ui.terminal_text import visible
    from mini_agent.ui.trust_question import ask_to_trust

    cwd = Path(os.path.abspath(settings.cwd))
    catalog = find_skills(cwd, settings.user_dir, settings.data_dir, started=float("inf"))
    held = [skill for skill, _why in catalog.withheld.values()]
    if not held:
        return
    heading = (
        "These skills were changed during a mini-agent session (by the agent, a command it ran, or while it ran) "
        "and you have not trusted them since:"
    )
    lines = [f"{skill.name}: {skill.folder}" for skill in held]
    if can_ask and ask_to_trust(err, heading, lines, "Offer them to the model?", OFFERED):
        trust(settings.data_dir, [Path(os.path.realpath(skill.folder)) for skill in held])
        return
    why = "you declined" if can_ask else "start mini-agent on a terminal to be asked, or edit them yourself"
    names = ", ".join(skill.name for skill in held)
    print(visible(f"mini-agent: skills {names}: not offered to the model ({why})."), file=err)
