"""The only code that asks a human whether a tool call may run.

On a terminal: the call, the reason, the command's class or the change as a coloured diff, then one line of
answer: `y` yes; `n` no; `n` followed by words (or any other words) no, and the words go to the model; one
letter per "always" answer on offer (this exact command, this command prefix, edits to this file, this host).
Ctrl-C means no and ends the turn. Without a terminal, nobody is asked: the call is refused with the flag or
rule that would allow it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import TextIO

from mini_agent.safety.gate import ApprovalRequest
from mini_agent.safety.permissions import Allow, Decision, Deny, refusal_without_human
from mini_agent.ui.render import describe_call

YES = {"y", "yes"}
NO = {"n", "no", ""}
COLOURS = {"destructive": "31", "sensitive": "33", "ordinary": "36", "read-only": "32"}
SHOWN_ELSEWHERE = {"command", "content", "old_string", "new_string"}
"""Arguments shown as the command line or as the diff rather than in the argument list."""


def refuse_without_human(request: ApprovalRequest) -> Decision:
    """For runs nobody watches: never block, say what would allow the call."""
    return refusal_without_human(request.tool.name, request.ask)


def ask_on_terminal(
    err: TextIO, read_line: Callable[[str], str] | None = None
) -> Callable[[ApprovalRequest], Decision]:
    """Show the call on stderr and read the answer from the terminal."""

    def read_from_stdin(prompt: str) -> str:
        err.write(prompt)
        err.flush()
        line = sys.stdin.readline()
        if not line:
            raise EOFError
        return line

    read_line = read_line or read_from_stdin

    def confirm(request: ApprovalRequest) -> Decision:
        paint = _painter(err)
        _show(request, err, paint)
        keys = "/".join(["y", "n", *(grant.key for grant in request.ask.grants)])
        try:
            answer = read_line(paint("1", f"Allow? [{keys}] ")).strip()
        except EOFError:
            answer = ""
        except KeyboardInterrupt:
            err.write("\n")
            return Deny(
                f"The user refused {request.tool.name} and stopped the turn (Ctrl-C). Wait for their next message.",
                stop_turn=True,
            )
        return interpret(answer, request)

    return confirm


def interpret(answer: str, request: ApprovalRequest) -> Decision:
    """One line of answer as a decision: yes, an "always" grant, or no with the user's words for the model."""
    word, _, rest = answer.strip().partition(" ")
    lowered = word.lower().rstrip(",.!")
    if lowered in YES:
        return Allow("the user allowed it")
    for grant in request.ask.grants:
        if lowered == grant.key and not rest:
            return Allow(f"the user allowed it: {grant.label}", grant.rules)
    message = rest.strip() if lowered in NO else answer.strip()
    declined = f"The user declined to run {request.tool.name}."
    if message:
        return Deny(f"{declined} Their message: {message}")
    return Deny(f"{declined} Ask them how they want to proceed.")


def _show(request: ApprovalRequest, err: TextIO, paint: Callable[[str, str], str]) -> None:
    ask = request.ask
    colour = COLOURS.get(ask.risk, "36")
    print(f"\n{paint(colour, '●')} {describe_call(request.tool.name, request.arguments)} needs your approval", file=err)
    print(f"  {paint(colour, ask.reason)}", file=err)
    if request.tool.name == "bash":
        print(f"  $ {request.arguments.get('command', '')}", file=err)
        if ask.classification and ask.classification != ask.reason:
            print(f"  {paint('2', 'class: ' + ask.classification)}", file=err)
    shown = {key: value for key, value in request.arguments.items() if key not in SHOWN_ELSEWHERE}
    if request.tool.name != "bash" and shown:
        print(f"  {paint('2', json.dumps(shown, ensure_ascii=False))}", file=err)
    if request.preview:
        _print_diff(request.preview, err, paint)
    options = ["y yes", "n no (add words to tell the model why)"]
    options += [f"{grant.key} {grant.label}" for grant in ask.grants]
    print("  " + paint("2", " · ".join(options)), file=err)
    err.flush()


def _print_diff(diff: str, err: TextIO, paint: Callable[[str, str], str]) -> None:
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            line = paint("32", line)
        elif line.startswith("-") and not line.startswith("---"):
            line = paint("31", line)
        elif line.startswith("@@"):
            line = paint("36", line)
        print(f"  {line}", file=err)


def _painter(err: TextIO) -> Callable[[str, str], str]:
    if err.isatty() and not os.environ.get("NO_COLOR"):
        return lambda code, text: f"\x1b[{code}m{text}\x1b[0m"
    return lambda code, text: text
