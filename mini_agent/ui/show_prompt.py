"""`--show-prompt`: the exact system prompt and tool schemas a request would carry."""

from __future__ import annotations

import json
from typing import TextIO

from mini_agent.prompt import build_system, render_system, static_prompt
from mini_agent.settings import Settings
from mini_agent.tools import default_tools


def print_prompt(settings: Settings, out: TextIO) -> None:
    registry = default_tools()
    system = build_system(static_prompt(), registry, {})
    out.write(render_system(system) + "\n\n")
    out.write("=" * 72 + "\n# Tool schemas (the request's `tools` parameter)\n" + "=" * 72 + "\n")
    out.write(json.dumps(registry.schemas(), indent=2, ensure_ascii=False) + "\n")
