"""The only code that asks a human whether a tool call may run.

On a terminal: the call, why it asks, the command or the change as a coloured diff (ui/approval_view.py), then
one key, no Enter: `y` yes; `n` no, then a line for words to the model (Enter alone sends none); Enter alone is
no, the default; one letter per "always" answer on offer (this exact command, this command prefix, edits to this
file, this host); `v` shows the whole of a diff cut to fit the screen. Any other key is not an answer: the
question says which keys are. Ctrl-C means no and ends the turn. Without a terminal, nobody is asked: the call
is refused with the flag or rule that would allow it. A plan to approve (exit_plan_mode) is the same question
with its own answers (ui/plan_review.py).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TextIO

from mini_agent.gate import ApprovalRequest
from mini_agent.safety.permissions import Allow, Decision, Deny, refusal_without_human
from mini_agent.ui.approval_view import FULL_DIFF_KEY, approval_block
from mini_agent.ui.keys import ENTER, Keys, TerminalKeys, key_or_enter, line_or_nothing
from mini_agent.ui.spacing import apart
from mini_agent.ui.terminal_text import visible

YES = "y"
NO = "n"
ESCAPE = "\x1b"


def refuse_without_human(request: ApprovalRequest) -> Decision:
    """For runs nobody watches: never block, say what would allow the call."""
    return refusal_without_human(request.tool.name, request.ask)


refuse_without_human.attended = False  # type: ignore[attr-defined]  # no human: no PermissionRequest hooks (gate.py)


def ask_on_terminal(
    err: TextIO, keys: Keys | None = None, size: Callable[[], os.terminal_size] | None = None
) -> Callable[[ApprovalRequest], Decision]:
    """Show the call on stderr and read the answer, one key, from the terminal on stdin."""

    def terminal_size() -> os.terminal_size:
        try:
            return os.get_terminal_size(err.fileno())
        except (OSError, ValueError, AttributeError):
            return os.terminal_size((80, 24))

    size = size or terminal_size

    def confirm(request: ApprovalRequest) -> Decision:
        reader = keys or TerminalKeys(sys.stdin.fileno())
        paint = _painter(err)
        columns, rows = size()
        if request.plan is not None:
            from mini_agent.ui.plan_review import review_plan

            return review_plan(request, err, reader, paint, columns)
        shown = approval_block(request, paint, rows, columns)
        _write(err, apart(err) + "\n".join(shown.lines) + "\n")
        on_offer = [YES, NO, *(grant.key for grant in request.ask.grants)]
        prompt = paint("1", f"Allow? [{'/'.join(on_offer)}] ")
        reader.discard_typeahead()  # keys typed before the question was shown must not answer it
        try:
            while True:
                _write(err, prompt)
                key = key_or_enter(reader)
                if key == FULL_DIFF_KEY and shown.diff:
                    _write(err, "\n" + "\n".join([*shown.diff, shown.header, shown.lines[-1]]) + "\n")
                    continue
                decision = _answer(key, request, reader, err)
                if decision is not None:
                    return decision
                if key == ESCAPE:  # the rest of an arrow key's sequence is no answer either
                    reader.discard_typeahead()
                keys_named = ", ".join(on_offer) + (f", {FULL_DIFF_KEY}" if shown.diff else "")
                _write(err, f"\n  {paint('2', f'Press one of {keys_named}, or Enter for no.')}\n")
        except KeyboardInterrupt:
            _write(err, "\n")
            return Deny(
                f"The user refused {request.tool.name} and stopped the turn (Ctrl-C). Wait for their next message.",
                stop_turn=True,
            )

    return confirm


def _answer(key: str, request: ApprovalRequest, reader: Keys, err: TextIO) -> Decision | None:
    """The decision a key makes, or None for a key that is no answer; `n` reads the words that follow it."""
    lowered = key.lower()
    if lowered == YES:
        _write(err, "yes\n")
        return Allow("the user allowed it")
    for grant in request.ask.grants:
        if lowered == grant.key:
            _write(err, f"{visible(grant.label)}\n")
            return Allow(f"the user allowed it: {grant.label}", grant.rules)
    if key == ENTER:
        _write(err, "no\n")
        return declined(request.tool.name, "")
    if lowered == NO:
        _write(err, "no · why, for the model (Enter to skip): ")
        words = line_or_nothing(reader)
        return declined(request.tool.name, words)
    return None


def declined(tool: str, words: str) -> Deny:
    """No, with the user's words for the model when they gave some."""
    message = " ".join(words.split())
    if message:
        return Deny(f"The user declined to run {tool}. Their message: {message}")
    return Deny(f"The user declined to run {tool}. Ask them how they want to proceed.")


def _write(err: TextIO, text: str) -> None:
    err.write(text)
    err.flush()


def _painter(err: TextIO) -> Callable[[str, str], str]:
    if err.isatty() and not os.environ.get("NO_COLOR"):
        return lambda code, text: f"\x1b[{code}m{text}\x1b[0m"
    return lambda code, text: text
