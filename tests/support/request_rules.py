"""A strict reading of what the Messages API accepts in a request body, run by the loopback model on every
request it receives (fake_api.py), so every test that talks to it checks that what mini-agent sends is valid.

The rules are the API's own, as its 400 `invalid_request_error` answers state them: the first message is the
user's and roles alternate; every `tool_use` is answered by exactly one `tool_result` in the very next message,
results first; tool ids are unique and of the API's alphabet; tool inputs are objects; no text block is empty
or blank; block types belong to the role; every string encodes as UTF-8 (no lone surrogates); at most four
cache breakpoints. `problems(body)` lists what breaks them; an empty list is a valid request.
"""

from __future__ import annotations

import re
from typing import Any

from mini_agent.model.replies import KNOWN_BLOCKS

TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
MAX_BREAKPOINTS = 4

USER_BLOCKS = frozenset({"text", "image", "document", "tool_result", "search_result"})
ASSISTANT_BLOCKS = KNOWN_BLOCKS
"""The block types of an assistant turn, as the API defines them (replies.py keeps the list)."""
RESULT_CONTENT_BLOCKS = frozenset({"text", "image", "document", "search_result"})


def problems(body: Any, *, other_blocks: bool = False) -> list[str]:
    """What makes `body` (a decoded POST /v1/messages body) one the API would reject.

    `other_blocks`: block types of the endpoint's own are accepted in assistant turns (llama.cpp, vLLM...).
    """
    found: list[str] = []
    if not isinstance(body, dict):
        return [f"the body is not a JSON object: {type(body).__name__}"]
    _strings(body, "body", found)
    if not isinstance(body.get("model"), str) or not body["model"]:
        found.append("model: missing")
    tokens = body.get("max_tokens")
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1:
        found.append(f"max_tokens: {tokens!r}")
    _system(body.get("system"), found)
    _tools(body.get("tools"), found)
    _messages(body.get("messages"), found, other_blocks)
    _thinking(body, found)
    marks = _count_breakpoints(body)
    if marks > MAX_BREAKPOINTS:
        found.append(f"{marks} cache_control breakpoints (at most {MAX_BREAKPOINTS})")
    return found


EFFORTS = ("low", "medium", "high", "xhigh", "max")


def _thinking(body: dict, found: list[str]) -> None:
    """Extended thinking's rules: a budget of at least 1,024 below max_tokens, no sampling changes, tool_choice
    auto or none, and a tool loop whose turn began with thinking goes on with it (the turn's first reply must
    open with a thinking block when a budget is set: "Expected `thinking` or `redacted_thinking`")."""
    thinking, config = body.get("thinking"), body.get("output_config")
    if config is not None:
        if not isinstance(config, dict) or config.get("effort", "high") not in EFFORTS:
            found.append(f"output_config: {config!r}")
    if thinking is None:
        return
    if not isinstance(thinking, dict) or thinking.get("type") not in ("enabled", "adaptive", "disabled"):
        found.append(f"thinking: {thinking!r}")
        return
    if thinking.get("display", "summarized") not in ("summarized", "omitted"):
        found.append(f"thinking.display: {thinking['display']!r}")
    if any(key in body for key in ("temperature", "top_k")):
        found.append("thinking is not compatible with temperature or top_k")
    choice = body.get("tool_choice")
    if choice is not None and thinking["type"] == "enabled" and choice.get("type") not in ("auto", "none"):
        found.append("thinking may not be used with a forced tool_choice")
    if thinking["type"] != "enabled":
        return
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or budget < 1024:
        found.append(f"thinking.budget_tokens: {budget!r} (at least 1024)")
    elif isinstance(body.get("max_tokens"), int) and budget >= body["max_tokens"]:
        found.append(f"max_tokens must be greater than thinking.budget_tokens ({budget})")
    first = _turn_first_reply(body.get("messages"))
    if first is not None and not (
        isinstance(first.get("content"), list)
        and first["content"]
        and isinstance(first["content"][0], dict)
        and first["content"][0].get("type") in ("thinking", "redacted_thinking")
    ):
        found.append("Expected `thinking` or `redacted_thinking` to open the turn's first reply (a budget is set)")


def _turn_first_reply(messages: Any) -> dict | None:
    """The first assistant message of the turn a request continues, when it ends in tool results."""
    if not isinstance(messages, list) or not messages:
        return None

    def answers_calls(message: Any) -> bool:
        content = message.get("content") if isinstance(message, dict) else None
        return isinstance(content, list) and any(
            isinstance(block, dict) and block.get("type") == "tool_result" for block in content
        )

    if not answers_calls(messages[-1]):
        return None
    users = [i for i, m in enumerate(messages) if m.get("role") == "user" and not answers_calls(m)]
    start = users[-1] if users else None
    return next((m for m in messages[(start or 0) + 1 :] if m.get("role") == "assistant"), None)


def _strings(value: Any, where: str, found: list[str]) -> None:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            found.append(f"{where}: not valid UTF-8 ({exc.reason} at {exc.start}: {value[exc.start]!r})")
    elif isinstance(value, dict):
        for key, item in value.items():
            _strings(key, f"{where} key", found)
            _strings(item, f"{where}.{key}", found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _strings(item, f"{where}[{index}]", found)


def _system(system: Any, found: list[str]) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list):
        found.append(f"system: {type(system).__name__}")
        return
    for index, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text":
            found.append(f"system[{index}]: not a text block")
        elif not isinstance(block.get("text"), str) or not block["text"].strip():
            found.append(f"system[{index}]: empty text")


def _tools(tools: Any, found: list[str]) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        found.append("tools: not a list")
        return
    names: set[str] = set()
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict):
            found.append(f"tools[{index}]: not an object")
            continue
        name = tool.get("name")
        _unique(name, TOOL_NAME, names, f"tools[{index}]: name", found)
        if "type" not in tool and not isinstance(tool.get("input_schema"), dict):
            found.append(f"tools[{index}] ({name}): input_schema is not an object")


def _messages(messages: Any, found: list[str], other_blocks: bool) -> None:
    if not isinstance(messages, list) or not messages:
        found.append("messages: missing or empty")
        return
    ids: set[str] = set()
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            found.append(f"{where}: not a user or assistant message")
            return
        role = message["role"]
        if index == 0 and role != "user":
            found.append("messages[0]: the first message is not the user's")
        if index and messages[index - 1].get("role") == role:
            found.append(f"{where}: a second {role} message in a row")
        content = message.get("content")
        if isinstance(content, str):
            if not content.strip() and not (role == "assistant" and index == len(messages) - 1):
                found.append(f"{where}: empty text")
            continue
        if not isinstance(content, list) or not content:
            found.append(f"{where}: content is empty or not a list")
            continue
        allowed = USER_BLOCKS if role == "user" else ASSISTANT_BLOCKS
        for number, block in enumerate(content):
            _block(block, f"{where}.content[{number}]", allowed, found, other_blocks and role == "assistant")
        calls = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
        for call in calls:
            _unique(call.get("id"), TOOL_ID, ids, f"{where}: tool_use id", found)
        _answered(messages, index, calls, found)


def _unique(value: Any, pattern: re.Pattern[str], seen: set[str], what: str, found: list[str]) -> None:
    """A name or id: of the API's alphabet, and not seen before in the request."""
    if not isinstance(value, str) or not pattern.match(value):
        found.append(f"{what} {value!r} is not of the form {pattern.pattern}")
    elif value in seen:
        found.append(f"{what} {value!r} used twice")
    seen.add(str(value))


def _block(block: Any, where: str, allowed: frozenset[str], found: list[str], other_blocks: bool) -> None:
    if not isinstance(block, dict):
        found.append(f"{where}: not an object")
        return
    kind = block.get("type")
    if kind not in allowed and not (other_blocks and isinstance(kind, str)):
        found.append(f"{where}: block type {kind!r} is not allowed here")
        return
    if kind == "text" and (not isinstance(block.get("text"), str) or not block["text"].strip()):
        found.append(f"{where}: empty text block")
    elif kind == "tool_use":
        if not isinstance(block.get("input"), dict):
            found.append(f"{where}: tool_use input is {type(block.get('input')).__name__}, not an object")
        if not isinstance(block.get("name"), str) or not TOOL_NAME.match(block["name"]):
            found.append(f"{where}: tool_use name {block.get('name')!r}")
    elif kind == "thinking" and not isinstance(block.get("signature"), str):
        found.append(f"{where}: thinking without a signature")
    elif kind == "tool_result":
        if not isinstance(block.get("tool_use_id"), str):
            found.append(f"{where}: tool_result without a tool_use_id")
        if "is_error" in block and not isinstance(block["is_error"], bool):
            found.append(f"{where}: is_error {block['is_error']!r}")
        content = block.get("content")
        if isinstance(content, list):
            for number, item in enumerate(content):
                _block(item, f"{where}.content[{number}]", RESULT_CONTENT_BLOCKS, found, False)
        elif content is not None and not isinstance(content, str):
            found.append(f"{where}: tool_result content is {type(content).__name__}")


def _answered(messages: list, index: int, calls: list[dict], found: list[str]) -> None:
    """The tool_use blocks of messages[index] against the tool_result blocks of the message after it."""
    following = messages[index + 1] if index + 1 < len(messages) else None
    content = following.get("content") if isinstance(following, dict) else None
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
    if messages[index].get("role") == "user":
        own = messages[index].get("content")
        if index == 0 and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in own):
            found.append("messages[0]: a tool_result with no tool_use before it")
        return  # the results in a user message after a reply are checked against that reply
    wanted = [call.get("id") for call in calls]
    if not wanted:
        if results:
            found.append(f"messages[{index + 1}]: tool_result blocks after a reply that called no tool")
        return
    if following is None:
        if index != len(messages) - 1:
            found.append(f"messages[{index}]: tool_use blocks with no message after them")
        return  # a reply sent back last (pause_turn) is not answered yet
    if following.get("role") != "user":
        found.append(f"messages[{index + 1}]: the tool_use blocks before it are not answered by the user")
        return
    for call_id in wanted:
        count = results.count(call_id)
        if count != 1:
            found.append(f"messages[{index + 1}]: {count} tool_result blocks for tool_use {call_id!r}")
    for result_id in results:
        if result_id not in wanted:
            found.append(f"messages[{index + 1}]: a tool_result for {result_id!r}, which the reply did not call")
    kinds = [b.get("type") for b in blocks]
    if "tool_result" in kinds and any(kind != "tool_result" for kind in kinds[: len(results)]):
        found.append(f"messages[{index + 1}]: tool_result blocks do not come first")


def _count_breakpoints(value: Any) -> int:
    if isinstance(value, dict):
        return ("cache_control" in value) + sum(_count_breakpoints(item) for item in value.values())
    if isinstance(value, list):
        return sum(_count_breakpoints(item) for item in value)
    return 0
