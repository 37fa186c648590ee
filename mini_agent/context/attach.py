"""Piped input attached to the prompt: the text of the `stdin` context block (P0) beside the user's words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO

from mini_agent.xmltext import escape, system_hint


@dataclass(frozen=True)
class Attachment:
    text: str
    """The block's text: the input XML-escaped, and a hint when it was cut."""
    chars: int
    truncated: bool


def read_limited(stream: BinaryIO, limit_chars: int) -> tuple[str, bool]:
    """Up to limit_chars of a byte stream as text, and whether more was there; never reads it all."""
    data = stream.read(limit_chars * 4 + 1)
    text = data.decode("utf-8", errors="replace")
    more = len(text) > limit_chars or bool(stream.read(1))
    return text[:limit_chars], more


def stdin_attachment(text: str, truncated: bool, limit_chars: int) -> Attachment:
    body = escape(text)
    if truncated:
        body += "\n" + system_hint(
            "truncated",
            f"The piped input was longer than {limit_chars} characters; only the first {limit_chars} are attached. "
            "Ask the user for the rest or for a file path if it matters.",
            shown=f"1-{limit_chars}",
        )
    return Attachment(body, len(text), truncated)
