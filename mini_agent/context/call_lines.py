"""How a finished tool call is described afterwards: its line in the recent-activity block, and the result the
model gets for a call Ctrl-C stopped."""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # sources.py imports this module and must stay cheap: no pydantic
    from mini_agent.tools.base import ToolResult

FAILED = "-> failed"


def call_line(
    name: str, arguments: dict, result: ToolResult, at: datetime | None = None, seconds: float | None = None
) -> str:
    """A tool call as one line for the recent-activity block: when it ran, what ran, how it went, how long it took.

    A command that exited non-zero counts as failed (the bash tool returns it as a normal result, not an error),
    so the model sees at a glance which calls not to repeat unchanged.
    """
    shown = json.dumps(arguments, ensure_ascii=False)
    if len(shown) > 120:
        shown = shown[:117] + "..."
    when = f"{at:%H:%M:%S} " if at is not None else ""
    took = f" ({_seconds(seconds)} s)" if seconds is not None else ""
    return f"{when}{name} {shown} {_outcome(result)}{took}"


def _outcome(result: ToolResult) -> str:
    if result.is_error:
        first = result.content.splitlines()[0][:80] if result.content else "error"
        return f"{FAILED}: {first}"
    if result.exit_code:
        killed = f", killed by {result.killed_by}" if result.killed_by else ""
        return f"{FAILED} (exit code {result.exit_code}{killed})"
    return "-> ok"


def _seconds(seconds: float) -> str:
    return f"{seconds:.1f}" if seconds < 10 else f"{seconds:.0f}"


INTERRUPTED = "Ctrl-C"
"""`ToolResult.killed_by` of a call the human interrupted: its line shows what it printed until then."""


def interrupted_text(risk: str, seconds: float, output: str) -> str:
    what = "the command and every process it started were killed" if risk == "exec" else "the call was abandoned"
    text = (
        f"Interrupted after {_seconds(seconds)} s: the user pressed Ctrl-C and {what}. It may have done part of its "
        "work; check its effects before running it again."
    )
    return f"{text}\nOutput so far:\n{output}" if output.strip() else text
