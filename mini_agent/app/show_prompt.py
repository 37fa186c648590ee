"""`--show-prompt`: the exact system prompt and tool schemas a request would carry."""

from __future__ import annotations

import json
from typing import TextIO

from mini_agent.prompt import NON_INTERACTIVE, build_system, render_system, static_prompt
from mini_agent.settings import Settings
from mini_agent.tools import default_tools
from mini_agent.ui.terminal_text import VisibleWriter


def print_prompt(settings: Settings, out: TextIO, one_shot: bool = False) -> None:
    """`one_shot`: as a `-p` run sends it, with the hint that nobody can answer questions."""
    from mini_agent.subagents.delegation import with_subagents

    registry = with_subagents(default_tools(), settings)[0]  # the task tool and the named agents it offers
    system = build_system(static_prompt(), registry, {"non_interactive": NON_INTERACTIVE} if one_shot else {})
    if out.isatty():  # project files are in it; to a pipe it goes exact, byte for byte
        out = VisibleWriter(out)
    out.write(render_system(system) + "\n\n")
    out.write("=" * 72 + "\n# Tool schemas (the request's `tools` parameter)\n" + "=" * 72 + "\n")
    out.write(json.dumps(registry.schemas(), indent=2, ensure_ascii=False) + "\n")
