"""What one call to the model sends and gets back, and how a reply in any server's shape becomes a transcript entry.

Compatible servers answer in shapes the API itself never sends: `content: null`, no `usage`, `stop_reason` null,
thinking without a signature, whitespace-only text, block types of their own, lone surrogates in text, tool calls
cut short, with an input that is not an object or an id already used. A reply is normalised here once, on receipt
(wellformed.py), so that what the transcript holds is what the endpoint will accept back, and a call that is not
whole is never run: it is answered with an error that asks for it again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mini_agent.model.endpoints import accepts_unknown_blocks, wants_thinking_back
from mini_agent.model.wellformed import CUT, CUT_INPUT, CUT_SIBLING, MAX_TOKENS, admit_calls, safe
from mini_agent.usage import Usage

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
_NOT_RUN_STOPS = frozenset({"refusal", "model_context_window_exceeded"})
"""Stops after which the reply's calls are not answered one by one: the turn ends (agent.py)."""
_SDK_ONLY_FIELDS = frozenset({"parsed_output"})


@dataclass(frozen=True)
class Request:
    """Everything one call to the model sends."""

    model: str
    system: list[dict]
    messages: list[dict]
    tools: list[dict]
    max_tokens: int
    effort: str = "off"
    """The thinking level asked for (thinking.py decides what, if anything, the endpoint is sent for it)."""

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
    refused: dict[str, str] = field(default_factory=dict)
    """Calls that must not run, by id, with the error result the model gets for each instead."""
    id: str | None = None
    """The endpoint's id of the message (`msg_...`), when it gave one."""
    model: str | None = None
    """The model that answered, as the endpoint named it."""
    cut: bool = False
    """A call was cut short (its input did not arrive whole, or the reply reached the output limit): no call of
    the reply runs, and the model is asked to send them again."""

    def runs_tools(self) -> bool:
        """Whether the tool calls of this reply are answered one by one (run, or refused as `refused` says).

        Servers that end a reply holding tool calls with `end_turn` or `stop` still mean them; a refusal holds
        nothing to act on.
        """
        return self.stop_reason not in _NOT_RUN_STOPS


def reply_from(
    message: dict, family: str, streamed_usage: dict | None = None, taken: frozenset[str] = frozenset()
) -> Reply:
    """A Reply from a message in the API's JSON shape (from a stream, rebuilt, or a plain response), fit to go
    back to an endpoint of `family` (what each family takes back: endpoints.py) after the conversation whose
    tool_use ids are `taken`."""
    blocks, dropped = [], []
    for block in message.get("content") or ():
        if not isinstance(block, dict):
            dropped.append(type(block).__name__)
            continue
        kind = block.get("type")
        if not _sendable(block, kind, family):
            dropped.append(str(kind))
            continue
        blocks.append(safe({k: v for k, v in block.items() if k not in _SDK_ONLY_FIELDS}))
    usage_data = streamed_usage if streamed_usage is not None else message.get("usage")
    usage_data = usage_data if isinstance(usage_data, dict) else {}
    stop_reason = message.get("stop_reason")
    if stop_reason is None:
        # The API always says why it stopped; a server that does not means a finished reply.
        stop_reason = "tool_use" if any(b.get("type") == "tool_use" for b in blocks) else "end_turn"
    refused, cut = _refusals(blocks, set(taken), stop_reason)
    details = message.get("stop_details")
    return Reply(
        message={"role": "assistant", "content": blocks},
        stop_reason=stop_reason,
        usage=Usage.from_mapping(usage_data),
        stop_details=details if isinstance(details, dict) else None,
        usage_reported=_prompt_counted(usage_data),
        dropped=tuple(dropped),
        refused=refused,
        id=_named(message.get("id")),
        model=_named(message.get("model")),
        cut=cut,
    )


def _named(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _prompt_counted(usage: dict) -> bool:
    """Whether the endpoint said how big the prompt was. A prompt always has tokens (the system prompt alone has
    hundreds), so a total of 0 is a router that does not count (some report `input_tokens: 0`), not a count."""
    counts = [usage.get(key) for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")]
    return isinstance(counts[0], int) and sum(count for count in counts if isinstance(count, int)) > 0


def _refusals(blocks: list[dict], taken: set[str], stop_reason: str) -> tuple[dict[str, str], bool]:
    """The calls of a reply that must not run and why; whether any was cut. Repairs the blocks in place."""
    arrived = {id(block): block.pop(CUT_INPUT) for block in blocks if CUT_INPUT in block}
    refused = admit_calls(blocks, taken)
    calls = [block for block in blocks if block.get("type") == "tool_use"]
    if arrived:
        for call in calls:
            raw = arrived.get(id(call))
            if raw is None:
                refused[call["id"]] = CUT_SIBLING
            else:
                start = raw if len(raw) <= 120 else f"{raw[:120]}..."
                refused[call["id"]] = CUT.format(size=len(raw), start=start)
    elif stop_reason == "max_tokens":
        refused.update({call["id"]: MAX_TOKENS for call in calls})
    return refused, bool(calls) and (bool(arrived) or stop_reason == "max_tokens")


def _sendable(block: dict, kind: object, family: str) -> bool:
    if kind == "text":
        # The API rejects empty and whitespace-only text blocks, and they say nothing.
        return isinstance(block.get("text"), str) and bool(block["text"].strip())
    if kind == "thinking":
        # Without its signature the API refuses a thinking block back; local servers send none.
        return bool(block.get("signature")) or wants_thinking_back(family)
    if kind == "tool_use":  # a missing or unusable id is replaced (wellformed.admit_calls)
        return isinstance(block.get("name"), str)
    return kind in KNOWN_BLOCKS or (accepts_unknown_blocks(family) and isinstance(kind, str))
