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


def tool_result(tool_use_id: str, content: str, is_error: bool = False) -> ContentBlockParam:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def tool_uses(message: MessageParam) -> list[dict]:
    """The client-side tool calls of an assistant message (server-tool blocks are the API's own business)."""
    return [block for block in message["content"] if isinstance(block, dict) and block.get("type") == "tool_use"]


def text_of(message: MessageParam) -> str:
    """The text blocks of a message, joined."""
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if block.get("type") == "text")


def with_cache_breakpoint(messages: list[MessageParam]) -> list[MessageParam]:
    """A request copy whose last block carries the moving cache breakpoint; the transcript is not touched."""
    if not messages:
        return messages
    last = messages[-1]
    content = last["content"]
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not content:
        return messages
    marked = dict(content[-1], cache_control=CACHE_BREAKPOINT)
    return [*messages[:-1], {**last, "content": [*content[:-1], marked]}]
