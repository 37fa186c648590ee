"""Instruction text the agent wrote, at start-up: on a terminal the human is asked whether to obey it (the same
question as a project's hooks and rules); without one it stays data, with a notice. See
context/instruction_trust.py for what is remembered and why."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO

from mini_agent.context.instruction_trust import trust, written
from mini_agent.settings import Settings

OBEYED = "The model will follow what they say."


def prepare(settings: Settings, can_ask: bool, err: TextIO | None = None) -> None:
    err = err or sys.stderr
    if not written(settings.data_dir):
        return  # the usual case: one small read, no instruction file opened
    from datetime import datetime

    from mini_agent.context.blocks import TurnInput
    from mini_agent.context.instruction_text import WRITTEN, judged
    from mini_agent.ui.terminal_text import visible
    from mini_agent.ui.trust_question import ask_to_trust

    cwd = Path(os.path.abspath(settings.cwd))
    inp = TurnInput("", cwd, datetime.now().astimezone(), settings.user_dir, data_dir=settings.data_dir)
    found = judged(cwd, inp)
    parts = [judgement.part for judgement in found[0] if judgement.distrust == WRITTEN] if found else []
    if not parts:
        return
    heading = (
        "These instruction files were changed during a mini-agent session (by the agent, a command it ran, or "
        "while it ran) and you have not trusted them since:"
    )
    lines = [f"{part.path} ({len(part.text.encode()):,} bytes)" for part in parts]
    if can_ask and ask_to_trust(err, heading, lines, "Obey them?", OBEYED):
        trust(settings.data_dir, [part.real for part in parts])
        return
    why = "you declined" if can_ask else "start mini-agent on a terminal to be asked, or edit them yourself"
    names = ", ".join(str(part.path) for part in parts)
    print(visible(f"mini-agent: {names}: shown to the model as data, not obeyed ({why})."), file=err)
