"""Lines both front ends print for an event beside a turn's own: a sub-agent's tool call or notice under its task
call, an attached image. Loads no event class before an event arrives: the REPL's renderer imports this module
before its first prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mini_agent.ui.tool_line import UNICODE, Glyphs, describe_call, tool_line

if TYPE_CHECKING:
    from mini_agent.context.reports import ImagesAttached
    from mini_agent.events import SubAgentEvent


def nested_line(event: SubAgentEvent, glyphs: Glyphs = UNICODE, nest: str = "  ⎿ ") -> str | None:
    """A sub-agent's event as one compact line under its task call, or None: its words and requests stay off the
    screen, only its tool calls (as the parent's are shown, without the glyph) and notices show."""
    from mini_agent.events import Notice, ToolFinished

    inner, who = event.event, f"[{event.name} {event.agent_id}] "
    if isinstance(inner, ToolFinished):
        shown = tool_line(inner, glyphs)
        outcome = f"{glyphs.fail} {shown.note}" if shown.note else shown.outcome
        return f"{nest}{who}{describe_call(inner.name, inner.input, inner.tool)} {outcome}"
    if isinstance(inner, Notice):
        return f"{nest}{who}! {inner.text}"
    return None


def attachment_lines(event: ImagesAttached) -> list[str]:
    """One line per image the user attached (`!` first when it could not be): still to pass `visible`, for a
    file's name may hold escape sequences."""
    return [f"! {image.line()}" if image.problem else image.line() for image in event.images]
