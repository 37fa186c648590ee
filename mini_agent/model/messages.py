"""Helpers over the Messages API shapes. The transcript is a list of message params, exactly as sent."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mini_agent.prompt import CACHE_BREAKPOINT

if TYPE_CHECKING:
    from anthropic.types import ContentBlockParam, MessageParam
else:
    MessageParam = dict
    ContentBlockParam = dict


def user(*blocks: ContentBlockParam | str) -> MessageParam:
    return {"role": "user", "content": [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks]}


def tool_result(tool_use_id: str, content: str, is_error: bool = False, blocks: tuple = ()) -> ContentBlockParam:
    """`blocks`: more content after the text (an MCP tool's images)."""
    body: Any = [{"type": "text", "text": content}, *blocks] if blocks else content
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": body}
    if is_error:
        block["is_error"] = True
    return block


def without_images(messages: list[MessageParam], note: str) -> tuple[list[MessageParam], int]:
    """The messages with each image block (a tool result's too) replaced by a text block saying `note`, and how
    many were; a message without images stays the same object, and no message is changed in place."""
    replaced = 0

    def swap(blocks: list) -> list:
        nonlocal replaced
        swapped = []
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "image":
                block = {"type": "text", "text": note}
                replaced += 1
            elif isinstance(block, dict) and block.get("type") == "tool_result" and isinstance(block["content"], list):
                inner = swap(block["content"])
                block = block if inner == block["content"] else {**block, "content": inner}
            swapped.append(block)
        return swapped

    result = []
    for message in messages:
        content = message["content"]
        if not isinstance(content, str):
            before = replaced
            blocks = swap(content)
            message = message if replaced == before else {**message, "content": blocks}
        result.append(message)
    return result, replaced


def tool_uses(message: MessageParam) -> list[dict]:
    """The client-side tool calls of an assistant message (server-tool blocks are the API's own business)."""
    return [block for block in message["content"] if isinstance(block, dict) and block.get("type") == "tool_use"]


def text_of(message: MessageParam) -> str:
    """The text blocks of a message, joined."""
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if block.get("type") == "text")


LOOKBACK_BLOCKS = 20
"""The API looks this many blocks back from a breakpoint for an earlier cached prefix."""
_UNMARKABLE = ("thinking", "redacted_thinking")


def with_cache_breakpoint(messages: list[MessageParam]) -> list[MessageParam]:
    """A request copy whose last block carries the moving cache breakpoint; the transcript is not touched.

    When the latest step added more blocks than the API looks back over (a reply with many parallel tool calls
    and their results), the end of the previous request is marked too, so its cached prefix is still found.
    A thinking block or an empty text block never carries the mark (the API rejects it there).
    """
    if not messages:
        return messages
    marked = list(messages)
    _mark_last(marked, len(marked) - 1)
    if len(messages) >= 3 and messages[-2]["role"] == "assistant":
        added = sum(_block_count(message) for message in messages[-2:])
        if added > LOOKBACK_BLOCKS - 1:
            _mark_last(marked, len(marked) - 3)
    return marked


def _block_count(message: MessageParam) -> int:
    content = message["content"]
    return 1 if isinstance(content, str) else len(content)


def _mark_last(messages: list[MessageParam], at: int) -> None:
    """Mark the last markable block of messages[at] (in place on the copy list)."""
    message = messages[at]
    content = message["content"]
    if isinstance(content, str):
        if not content.strip():
            return
        content = [{"type": "text", "text": content}]
    for index in range(len(content) - 1, -1, -1):
        block = content[index]
        if block.get("type") in _UNMARKABLE or (block.get("type") == "text" and not str(block.get("text", "")).strip()):
            continue
        content = [*content[:index], dict(block, cache_control=CACHE_BREAKPOINT), *content[index + 1 :]]
        messages[at] = {**message, "content": content}
        return
