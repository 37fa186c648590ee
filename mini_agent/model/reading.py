"""A reply read from what the endpoint sent: a stream of events (asked for or not) or a whole JSON body (an
error some gateways send with status 200, or a whole message where events were due).

Apart from client.py so that making a provider loads none of it: the REPL makes its provider before its first
prompt, and reads a reply only after the warm-up behind that prompt has loaded this module
(`AnthropicProvider.warm_up`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mini_agent.events import Emit, TextDelta, Thought
from mini_agent.model.assembly import StreamAssembly
from mini_agent.model.faults import EndpointAnswer
from mini_agent.model.replies import Reply, reply_from


def read_reply(
    response: Any, raw_events: Callable[[Any], Any], emit: Emit, taken: frozenset[str], family: str
) -> Reply:
    """`raw_events`: the SDK's decoder of server-sent events for `response`; `taken`: the conversation's call
    ids, which a reply's calls may not reuse; `family`: the endpoint's (endpoints.py), whose gaps are filled."""
    content_type = response.headers.get("content-type", "event-stream")
    if "json" in content_type or "event-stream" not in content_type:
        return _whole(_json_answer(response.read()), emit, taken, family)
    assembly = StreamAssembly()
    # The SDK's own decoder splits the events; they are read raw rather than through the SDK's iterator,
    # which drops a `data:` line without an event name, and that is where gateways put their errors.
    for sse in raw_events(response):
        event = _event(sse.event, sse.data)
        if event is not None:
            text = assembly.add(event)
            for thought, redacted in assembly.take_thoughts():
                emit(Thought(thought, redacted))
            if text:
                emit(TextDelta(text))
    message, usage = assembly.message()
    return reply_from(message, family, streamed_usage=usage or {}, taken=taken)


def _whole(answer: dict, emit: Emit, taken: frozenset[str], family: str) -> Reply:
    reply = reply_from(answer, family, taken=taken)
    for block in reply.message["content"]:
        if block.get("type") in ("thinking", "redacted_thinking"):
            emit(Thought(str(block.get("thinking") or ""), block["type"] == "redacted_thinking"))
        elif block.get("type") == "text":
            emit(TextDelta(block["text"]))
    return reply


def _json_answer(content: bytes) -> dict:
    """A whole message from a JSON body; an error body (even with status 200) becomes the endpoint's own words."""
    try:
        answer = json.loads(content)
    except ValueError:
        raise EndpointAnswer(None, f"a body that is not JSON: {content[:80]!r}") from None
    if not isinstance(answer, dict):
        raise EndpointAnswer(None, f"JSON that is not a message: {str(answer)[:80]}")
    if answer.get("error") or answer.get("type") == "error":
        raise EndpointAnswer(answer, None)
    is_message = answer.get("type") == "message" or (answer.get("type") is None and answer.get("role") == "assistant")
    if not is_message or not isinstance(answer.get("content"), list | None):
        raise EndpointAnswer(None, f"JSON that is not a message: {str(answer)[:80]}")
    return answer


def _event(name: str | None, data: str) -> dict | None:
    """One server-sent event as the JSON it carries; None for what carries no part of a reply (pings, `[DONE]`).

    An `error` event, or an unnamed data line holding an error (a LiteLLM proxy with keep-alive pings answers
    200 and then that), raises the endpoint's own error.
    """
    if name == "ping" or not data or data == "[DONE]":
        return None
    payload = json.loads(data)  # not JSON: a malformed reply, retried (faults.py)
    if not isinstance(payload, dict):
        raise EndpointAnswer(None, f"an event that is not an object: {data[:80]!r}")
    if name == "error" or (name is None and "error" in payload):
        raise EndpointAnswer(payload, None, in_stream=True)
    if name is None:
        return None
    payload.setdefault("type", name)
    return payload
