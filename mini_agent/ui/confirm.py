"""The only code that asks a human whether a tool call may run."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TextIO

from mini_agent.agent import ApprovalRequest
from mini_agent.permissions import Allow, Decision, Deny, refusal_without_human
from mini_agent.ui.render import describe_call

YES = {"y", "yes"}


def refuse_without_human(request: ApprovalRequest) -> Decision:
    """For runs nobody watches: never block, say what would allow the call."""
    return refusal_without_human(request.tool, request.reason)


def ask_on_terminal(
    err: TextIO, read_line: Callable[[str], str] | None = None
) -> Callable[[ApprovalRequest], Decision]:
    """Show the call (and its diff) on stderr and wait for y/n. Ctrl-C propagates and aborts the turn."""

    def read_from_stdin(prompt: str) -> str:
        err.write(prompt)
        err.flush()
        line = sys.stdin.readline()
        if not line:
            raise EOFError
        return line

    read_line = read_line or read_from_stdin

    def confirm(request: ApprovalRequest) -> Decision:
        print(f"\n{describe_call(request.tool.name, request.arguments)} needs approval: {request.reason}", file=err)
        if request.tool.name == "bash":
            print(f"  $ {request.arguments.get('command', '')}", file=err)
        if request.preview:
            _print_diff(request.preview, err)
        err.flush()
        try:
            answer = read_line("Allow? [y/N] ").strip().lower()
        except EOFError:
            answer = ""
        if answer in YES:
            return Allow()
        return Deny(f"The user declined to run {request.tool.name}. Ask them how they want to proceed.")

    return confirm


def _print_diff(diff: str, err: TextIO) -> None:
    colour = err.isatty() and not os.environ.get("NO_COLOR")
    for line in diff.splitlines():
        if colour and line.startswith("+") and not line.startswith("+++"):
            line = f"\x1b[32m{line}\x1b[0m"
        elif colour and line.startswith("-") and not line.startswith("---"):
            line = f"\x1b[31m{line}\x1b[0m"
        print(line, file=err)
