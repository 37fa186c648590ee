"""What one call to the model sends and gets back, and how a reply in any server's shape becomes a transcript entry.

Compatible servers answer in shapes the API itself never sends: `content: null`, no `usage`, `stop_reason` null,
thinking without a signature, whitespace-only text, block types of their own, lone surrogates in text. A reply is
normalised here once, on receipt, so that what the transcript holds is what the endpoint will accept back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from mini_agent.model.endpoints import accepts_unknown_blocks, wants_thinking_back
from mini_agent.model.usage import Usage

KNOWN_BLOCKS = frozenset(
    {
        "text",
        "thinking",
        "redacted_thinking",
        "tool_use",
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
        "container_upload",
        "mcp_tool_use",
        "mcp_tool_result",
        "compaction",
        "fallback",
    }
)
"""Block types the Messages API defines and takes back in an assistant turn."""
_NOT_RUN_STOPS = frozenset({"max_tokens", "refusal", "model_context_window_exceeded"})
_SURROGATE = re.compile("[\ud800-\udfff]")
_SDK_ONLY_FIELDS = frozenset({"parsed_output"})


@dataclass(frozen=True)
class Request:
    """Everything one call to the model sends."""

    model: str
    system: list[dict]
    messages: list[dict]
    tools: list[dict]
    max_tokens: int

    def body(self) -> dict[str, Any]:
        body = {"model": self.model, "max_tokens": self.max_tokens, "system": self.system, "messages": self.messages}
        if self.tools:
            body["tools"] = self.tools
        return body


@dataclass(frozen=True)
class Reply:
    """A complete assistant reply: the message param to append, why it stopped, what it cost."""

    message: dict
    stop_reason: str | None
    usage: Usage
    stop_details: dict | None = None
    usage_reported: bool = True
    """False when the endpoint sent no input token count: the conversation's size is estimated instead."""
    dropped: tuple[str, ...] = ()
    """Block types received but kept out of the transcript, because the endpoint would reject them back."""

    def runs_tools(self) -> bool:
        """Whether the tool calls of this reply are to be run: the model asked for them and they are whole.

        Servers that end a reply holding tool calls with `end_turn` or `stop` still mean them; a reply cut at the
        output limit may hold a call whose input is incomplete, and a refusal holds nothing to act on.
        """
        return self.stop_reason not in _NOT_RUN_STOPS


def reply_from(message: dict, family: str, streamed_usage: dict | None = None) -> Reply:
    """A Reply from a message in the API's JSON shape (from a stream, rebuilt, or a plain response), fit to go
    back to an endpoint of `family` (what each family takes back: endpoints.py)."""
    blocks, dropped = [], []
    for block in message.get("content") or ():
        if not isinstance(block, dict):
            dropped.append(type(block).__name__)
            continue
        kind = block.get("type")
        if not _sendable(block, kind, family):
            dropped.append(str(kind))
            continue
        blocks.append(_clean({k: v for k, v in block.items() if k not in _SDK_ONLY_FIELDS}))
    usage_data = streamed_usage if streamed_usage is not None else message.get("usage")
    usage_data = usage_data if isinstance(usage_data, dict) else {}
    stop_reason = message.get("stop_reason")
    if stop_reason is None:
        # The API always says why it stopped; a server that does not means a finished reply.
        stop_reason = "tool_use" if any(b.get("type") == "tool_use" for b in blocks) else "end_turn"
    details = message.get("stop_details")
    return Reply(
        message={"role": "assistant", "content": blocks},
        stop_reason=stop_reason,
        usage=Usage.from_mapping(usage_data),
        stop_details=details if isinstance(details, dict) else None,
        usage_reported=_prompt_counted(usage_data),
        dropped=tuple(dropped),
    )


def _prompt_counted(usage: dict) -> bool:
    """Whether the endpoint said how big the prompt was. A prompt always has tokens (the system prompt alone has
    hundreds), so a total of 0 is a router that does not count (some report `input_tokens: 0`), not a count."""
    counts = [usage.get(key) for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")]
    return isinstance(counts[0], int) and sum(count for count in counts if isinstance(count, int)) > 0


def _sendable(block: dict, kind: object, family: str) -> bool:
    if kind == "text":
        # The API rejects empty and whitespace-only text blocks, and they say nothing.
        return isinstance(block.get("text"), str) and bool(block["text"].strip())
    if kind == "thinking":
        # Without its signature the API refuses a thinking block back; local servers send none.
        return bool(block.get("signature")) or wants_thinking_back(family)
    if kind == "tool_use":
        return isinstance(block.get("id"), str) and isinstance(block.get("name"), str)
    return kind in KNOWN_BLOCKS or (accepts_unknown_blocks(family) and isinstance(kind, str))


def _clean(value: Any) -> Any:
    """Lone surrogates (a `\\ud800` escape in JSON) become U+FFFD: no file, terminal or request could take them."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if not value.isascii() else value
    if isinstance(value, dict):
        return {key: _clean(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_clean(item) for item in value]
    return value
