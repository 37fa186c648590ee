"""The conversation: transcript in the API's shape, the turn's original request, runtime hints, usage."""

from __future__ import annotations

from dataclasses import dataclass, field

from mini_agent.messages import MessageParam
from mini_agent.usage import Usage


@dataclass
class Session:
    messages: list[MessageParam] = field(default_factory=list)
    request: str = ""
    """The user's own words for the current turn, verbatim."""
    hints: dict[str, str] = field(default_factory=dict)
    """Runtime hints for system-prompt segment 3, one per key so a new one replaces its predecessor."""
    usage: Usage = field(default_factory=Usage)
    """Tokens of every reply in the session, summed."""
    last_usage: Usage | None = None
    """The latest reply's usage: the exact size of the conversation at that point."""

    def begin_turn(self, text: str, attachments: list[dict] | tuple = ()) -> None:
        """Record what the user typed, as typed, with any attachments as separate blocks."""
        self.request = text
        blocks = [{"type": "text", "text": text}, *attachments]
        last = self.messages[-1] if self.messages else None
        if last is not None and last["role"] == "user":
            # The previous turn ended without a reply to its last user message (interrupted, cut, refused):
            # fold the new words into it so roles keep alternating on every endpoint.
            last["content"] = [*last["content"], *blocks]
        else:
            self.messages.append({"role": "user", "content": blocks})

    def append(self, message: MessageParam) -> None:
        self.messages.append(message)

    def record_usage(self, usage: Usage) -> None:
        self.usage = self.usage + usage
        self.last_usage = usage
