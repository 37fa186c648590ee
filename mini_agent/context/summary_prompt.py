"""What the summariser is asked, and how the history it summarises is shown to it."""

from __future__ import annotations

import json

from mini_agent.context.blocks import is_injected
from mini_agent.tools.base import truncate_middle

SUMMARY_SYSTEM = (
    "You write hand-off summaries of coding sessions between a user and a code agent. Another instance of the "
    "agent will continue the work from your summary alone plus the latest messages, so it must be complete "
    "where it matters and exact: paths, names, commands, numbers and the user's words as they were written. "
    "Never invent progress: if something was not finished or not verified, say so."
)

SECTIONS = """Write the summary with exactly these sections, as plain text with the headings shown:

## User goals and explicit instructions
Every goal, instruction, constraint and preference the user stated, each quoted verbatim in double quotes.
Do not paraphrase these; do not drop any, however small.

## Decisions
What was decided and why.

## Files
Each file read, created or changed: its path, what changed, and its state now.

## Errors and fixes
Each error met, its cause, and how it was fixed (or that it is still open).

## Pending
What remains to be done.

## Current step
What was being done when the history was cut, and the next step."""

RESULT_CHARS = 1_500
"""Characters of each tool result shown to the summariser: enough to know what happened."""
TEXT_CHARS = 6_000


def summary_request(
    transcript: str, request: str, previous: str | None, instructions: list[str], focus: str | None
) -> str:
    """The one user message sent to the summariser."""
    parts = []
    if previous:
        parts.append(f"<previous_summary>\n{previous}\n</previous_summary>")
    parts.append(f"<transcript>\n{transcript}\n</transcript>")
    parts.append(f"The user's current request, verbatim:\n<request>\n{request}\n</request>")
    if instructions:
        listed = "\n".join(f'- "{item}"' for item in instructions)
        parts.append(f"Explicit instructions the user gave so far (keep every one verbatim):\n{listed}")
    parts.append(SECTIONS)
    if focus:
        parts.append(f"The user asked this compaction to focus on: {focus}")
    return "\n\n".join(parts)


def render_transcript(messages: list[dict], limit: int) -> str:
    """The history as readable text: who said what, which tools ran with what, a head of each result."""
    names: dict[str, str] = {}
    lines: list[str] = []
    for message in messages:
        role = message["role"]
        content = message["content"]
        if isinstance(content, str):
            lines.append(f"[{role}] {_cap(content, TEXT_CHARS)}")
            continue
        for block in content:
            lines.extend(_render_block(role, block, names))
    text = "\n".join(lines)
    return truncate_middle(text, limit, lambda omitted: f"[{omitted} characters of the middle left out]")


def _render_block(role: str, block: dict, names: dict[str, str]) -> list[str]:
    kind = block.get("type")
    if kind == "text":
        text = block.get("text", "")
        if is_injected(block):
            name = text.split('"', 2)[1]  # <context name="NAME" ...
            return [f"[{role}: context block {name!r} injected by the agent, not shown]"]
        return [f"[{role}] {_cap(text, TEXT_CHARS)}"]
    if kind == "tool_use":
        names[block.get("id", "")] = block.get("name", "?")
        arguments = json.dumps(block.get("input"), ensure_ascii=False)
        return [f"[assistant called {block.get('name')}] {_cap(arguments, RESULT_CHARS)}"]
    if kind == "tool_result":
        inner = block.get("content")
        text = inner if isinstance(inner, str) else _inner_text(inner)
        status = "error" if block.get("is_error") else "result"
        return [f"[{names.get(block.get('tool_use_id', ''), 'tool')} {status}] {_cap(text, RESULT_CHARS)}"]
    if kind in ("thinking", "redacted_thinking"):
        return []  # the reasoning is not the record; what it led to is
    return [f"[{role}: {kind} block]"]


def _inner_text(blocks: object) -> str:
    """A tool result's content list as text: an image is named, never its base64."""
    if not isinstance(blocks, list):
        return json.dumps(blocks, ensure_ascii=False)
    parts = [
        block.get("text", "") if block.get("type") == "text" else f"[{block.get('type')} block]"
        for block in blocks
        if isinstance(block, dict)
    ]
    return "\n".join(parts)


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]} [... {len(text) - limit} more characters]"
