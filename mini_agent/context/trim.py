"""Edits that shrink the history without a model: stub old tool results, cut overlong blocks, drop dangling
tool_use blocks. Each returns new message objects and leaves the originals (and so the session log) intact.
"""

from __future__ import annotations

from mini_agent.context.blocks import P1, P2, Ledger
from mini_agent.model.messages import without_images
from mini_agent.tools.base import truncate_middle
from mini_agent.xmltext import system_hint

STUB_OVER_CHARS = 500
STUB_HEAD_CHARS = 200
P1_KEEP_CHARS = 600
"""What is left of a P1 context block (git state, environment, memory) when the window is nearly full."""


OLD_IMAGE = system_hint(
    "compacted", "An image was here; it was removed during compaction. Read the file again if it is needed."
)


def stub_tool_results(messages: list[dict], protect_from: int) -> tuple[list[dict], int]:
    """Replace long tool results and images (up to ~1,600 tokens each) before `protect_from` by a stub; the
    originals are left untouched."""
    older, images = without_images(messages[:protect_from], OLD_IMAGE)
    messages = [*older, *messages[protect_from:]]
    result: list[dict] = []
    stubbed = images
    for index, message in enumerate(messages):
        if index >= protect_from or message["role"] != "user" or isinstance(message["content"], str):
            result.append(message)
            continue
        blocks = []
        for block in message["content"]:
            text = _result_text(block) if block.get("type") == "tool_result" else None
            if text is not None and len(text) > STUB_OVER_CHARS and not _is_stub(text):
                stub = system_hint(
                    "compacted",
                    "Older tool output cut during compaction; run the tool again if it is needed.",
                    original_chars=str(len(text)),
                )
                blocks.append({**block, "content": f"{text[:STUB_HEAD_CHARS]}\n[...]\n{stub}"})
                stubbed += 1
            else:
                blocks.append(block)
        result.append({**message, "content": blocks})
    return result, stubbed


def thin_context_blocks(messages: list[dict]) -> tuple[list[dict], int, int]:
    """Drop the P2 context blocks (recent activity, URLs) and shrink the P1 ones to their first P1_KEEP_CHARS
    characters, in every message: what the agent added goes before anything the user wrote. The user's own text
    and the P0 blocks (instructions, piped input, mentioned files) are never touched. Returns the messages, and
    how many blocks were dropped and shrunk."""
    dropped = shrunk = 0
    result = []
    for message in messages:
        if message["role"] != "user" or isinstance(message["content"], str):
            result.append(message)
            continue
        blocks = []
        for block in message["content"]:
            text = block.get("text", "") if block.get("type") == "text" else ""
            header = Ledger.header(text) if text else None
            if header is not None and header[1] == P2:
                dropped += 1
                continue
            if header is not None and header[1] == P1 and len(text) > P1_KEEP_CHARS + 200:
                shrunk += 1
                note = system_hint("compacted", "The rest of this context block was cut: the window is nearly full.")
                block = {**block, "text": f"{text[:P1_KEEP_CHARS]}\n[...]\n{note}\n</context>"}
            blocks.append(block)
        if not blocks:  # a message that held only context: a word keeps the turn's shape
            blocks = [{"type": "text", "text": system_hint("compacted", "Context blocks dropped here.")}]
        result.append({**message, "content": blocks})
    return result, dropped, shrunk


def truncate_long_blocks(messages: list[dict], limit: int) -> tuple[list[dict], int]:
    """Cut the middle of every assistant text or tool result longer than `limit`.

    The user's own words and the context blocks are never cut: they hold the request and the instructions.
    """
    cut = 0

    def shorten(text: str) -> str:
        nonlocal cut
        if len(text) <= limit:
            return text
        cut += 1
        return truncate_middle(
            text,
            limit,
            lambda omitted: system_hint(
                "truncated", f"{omitted} characters cut during compaction.", original_chars=str(len(text))
            ),
        )

    result = []
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            result.append({**message, "content": shorten(content)} if message["role"] == "assistant" else message)
            continue
        blocks = []
        for block in content:
            if block.get("type") == "text" and message["role"] == "assistant":
                block = {**block, "text": shorten(block["text"])}
            elif block.get("type") == "tool_result" and isinstance(block.get("content"), str):
                block = {**block, "content": shorten(block["content"])}
            blocks.append(block)
        result.append({**message, "content": blocks})
    return result, cut


def drop_dangling_tool_uses(messages: list[dict]) -> list[dict]:
    """Remove tool_use blocks that never got a tool_result (an interrupted step), and messages left empty."""
    answered = {
        block.get("tool_use_id")
        for message in messages
        if message["role"] == "user" and not isinstance(message["content"], str)
        for block in message["content"]
        if block.get("type") == "tool_result"
    }
    result = []
    for message in messages:
        if message["role"] == "assistant" and not isinstance(message["content"], str):
            content = [b for b in message["content"] if b.get("type") != "tool_use" or b.get("id") in answered]
            if not content:
                continue
            message = {**message, "content": content}
        result.append(message)
    return result


def _result_text(block: dict) -> str | None:
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if part.get("type") == "text")
    return None


def _is_stub(text: str) -> bool:
    return '<system_hint type="compacted"' in text
