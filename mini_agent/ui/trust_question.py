"""The question before a project's commands first run (its MCP servers, its hooks): what they run, then y/N."""

from __future__ import annotations

import sys
from typing import TextIO

from mini_agent.ui.terminal_text import visible


def ask_to_trust(err: TextIO, heading: str, lines: list[str], question: str) -> bool:
    """Anything but y or yes is a no, Ctrl-C included: the project's commands stay off."""
    print(f"\n{visible(heading)}", file=err)
    for line in lines:
        print(f"  {visible(line)}", file=err)  # a planted command must not repaint the question
    err.write(f"{visible(question)} They can run any command as you. [y/N] ")
    err.flush()
    try:
        answer = sys.stdin.readline()
    except KeyboardInterrupt:
        answer = ""
    return answer.strip().lower() in ("y", "yes")
