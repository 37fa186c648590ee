"""The question before a project's commands first run (its MCP servers, its hooks) or its allow rules are first
obeyed: what they run or allow, then y/N."""

from __future__ import annotations

import sys
from typing import TextIO

from mini_agent.ui.terminal_text import visible

RUNS_COMMANDS = "They can run any command as you."


def ask_to_trust(err: TextIO, heading: str, lines: list[str], question: str, warning: str = RUNS_COMMANDS) -> bool:
    """Anything but y or yes is a no, Ctrl-C included: the project's commands (or rules) stay off."""
    print(f"\n{visible(heading)}", file=err)
    for line in lines:
        print(f"  {visible(line)}", file=err)  # a planted command must not repaint the question
    err.write(f"{visible(question)} {warning} [y/N] ")
    err.flush()
    try:
        answer = sys.stdin.readline()
    except KeyboardInterrupt:
        answer = ""
    return answer.strip().lower() in ("y", "yes")


def not_trusted_why(can_ask: bool, flag: str, key: str) -> str:
    """Why a project's thing is not obeyed: the human said no, or nobody could be asked (then what would do)."""
    return "you declined to trust them" if can_ask else f"pass {flag}, or set {key} in your config"
