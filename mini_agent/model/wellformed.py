"""What the transcript must be for every request built from it to be one the API accepts, whatever came back.

Two kinds of damage get in from outside. Text that is not valid Unicode: a file name or output decoded with
`surrogateescape` holds lone surrogates, which no request can encode, and an endpoint can send `\\ud800` escapes.
`safe` makes such text sendable, one way everywhere: an escaped byte (U+DC80..U+DCFF) becomes the visible `\\xNN`
it stands for (what bash's `$'\\xff'` quoting also reads), any other lone surrogate U+FFFD. And tool calls the API
would refuse back: an input that is not an object, an id used twice or outside the API's alphabet. `admit_calls`
repairs those before a reply is stored and says which calls must not run; `repair` does the same for a stored
conversation (a session file written before these rules), pairing every call with exactly one result.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
"""The ids the API takes for a tool_use."""

NOT_AN_OBJECT = (
    "Not run: the input of this call was not a JSON object ({kind}). Send the call again with its arguments as "
    "an object."
)
UNANSWERED = "Not run: this call had no result in the stored conversation."
CUT_INPUT = "mini_agent_cut_input"
"""Set by the stream assembly on a tool_use block whose input JSON arrived cut: the text that did arrive."""
CUT = (
    "Not run: this call was cut off after {size} characters of its input, before it was complete, so nothing was "
    "run. Send the whole call again; if it carries a lot of text (a large file), write it in parts. What arrived "
    "began: {start}"
)
CUT_SIBLING = "Not run: another call of the same reply was cut off, so none of its calls was run. Send them again."
MAX_TOKENS = (
    "Not run: the reply reached the output limit, so this call may be incomplete, and nothing was run. Send the "
    "call again; if it carries a lot of text (a large file), write it in parts."
)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else "\ufffd"


def safe_text(text: str) -> str:
    """`text` with every lone surrogate made sendable: `\\xNN` for an escaped byte, U+FFFD for any other."""
    if text.isascii():
        return text
    return _SURROGATE.sub(_escaped, text)


def safe(value: Any) -> Any:
    """`value` (message params, any JSON-shaped data) with every string made sendable; the very same object
    when nothing needed it, so clean data is never copied."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        cleaned = {safe_text(key) if isinstance(key, str) else key: safe(item) for key, item in value.items()}
        same = all(a is b for a, b in zip(cleaned.values(), value.values(), strict=True)) and all(
            a is b for a, b in zip(cleaned, value, strict=True)
        )
        return value if same else cleaned
    if isinstance(value, list):
        items = [safe(item) for item in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


def fresh_id() -> str:
    """A tool_use id no endpoint sent: for a call whose own id is taken or unusable."""
    return f"toolu_ma_{secrets.token_hex(12)}"


def admit_calls(blocks: list[dict], taken: set[str]) -> dict[str, str]:
    """Make the tool_use blocks of one reply storable, in place: an id already in `taken` (an earlier call of
    this conversation or this reply) or outside the API's alphabet is replaced by a fresh one, an input that is
    not an object by `{}`. `taken` gains the ids. Returns, by (final) id, why a call must not run."""
    refused: dict[str, str] = {}
    for block in blocks:
        if block.get("type") != "tool_use":
            continue
        call_id = block.get("id")
        if not isinstance(call_id, str) or not TOOL_ID.match(call_id) or call_id in taken:
            block["id"] = call_id = fresh_id()
        taken.add(call_id)
        if not isinstance(block.get("input"), dict):
            refused[call_id] = NOT_AN_OBJECT.format(kind=type(block.get("input")).__name__)
            block["input"] = {}
    return refused


def call_ids(messages: list[dict]) -> set[str]:
    """The tool_use ids of a conversation."""
    return {
        block["id"]
        for message in messages
        if message.get("role") == "assistant" and isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("id"), str)
    }


def repair(messages: list[dict]) -> list[dict]:
    """A stored conversation made valid to send: text made safe, calls admitted (a renamed call's result
    renamed with it), every call answered exactly once in the message after it, results of no call dropped.
    The same list when nothing needed repair; calls the last message leaves unanswered are the caller's."""
    cleaned = safe(messages)
    repaired: list[dict] = []
    taken: set[str] = set()
    calls: list[tuple[object, str]] = []
    """The previous reply's calls: (the id it was sent with, the id it has now)."""
    for message in cleaned:
        content = message.get("content")
        if message.get("role") == "assistant" and isinstance(content, list):
            blocks = [dict(block) if isinstance(block, dict) else block for block in content]
            uses = [block for block in blocks if isinstance(block, dict) and block.get("type") == "tool_use"]
            sent = [(block.get("id"), block.get("input")) for block in uses]
            admit_calls(uses, taken)
            calls = [(old, block["id"]) for (old, _), block in zip(sent, uses, strict=True)]
            if sent != [(block["id"], block["input"]) for block in uses]:
                message = {**message, "content": blocks}
            repaired.append(message)
            continue
        if message.get("role") == "user" and (calls or _has_results(content)):
            answered = _answer(content, calls)
            message = {**message, "content": answered} if answered is not content else message
        calls = []
        repaired.append(message)
    same = len(repaired) == len(messages) and all(a is b for a, b in zip(repaired, messages, strict=True))
    return messages if same else repaired


def _has_results(content: Any) -> bool:
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def _answer(content: Any, calls: list[tuple[object, str]]) -> Any:
    """The user message after a reply with `calls`: one result per call, first, in call order."""
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}] if content else []
    results: dict[str, dict] = {}
    others: list[Any] = []
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            # A result goes to the first call sent with its id that has none yet (a call given a fresh id
            # takes the result that answered it under its old one).
            sent_as = block.get("tool_use_id")
            final = next((new for old, new in calls if old == sent_as and new not in results), None)
            if final is not None:
                results[final] = block if final == sent_as else {**block, "tool_use_id": final}
            continue  # a second result for a call, or the result of no call, goes
        others.append(block)
    ordered = [results.get(new) or _unanswered(new) for _, new in calls]
    answered = [*ordered, *others] or [{"type": "text", "text": "(no content)"}]
    same = len(answered) == len(blocks) and all(a is b for a, b in zip(answered, blocks, strict=True))
    return content if same and isinstance(content, list) else answered


def _unanswered(call_id: str) -> dict:
    return {"type": "tool_result", "tool_use_id": call_id, "content": UNANSWERED, "is_error": True}
