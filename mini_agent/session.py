"""The conversation: the model's view of the transcript, the full log, the turn's request, hints, usage.

`messages` is what the next request sends. `log` is append-only and keeps everything: each message as it was
added and, at each compaction, a marker holding the compacted view and its summary. Nothing is lost, and
`Session.restore(log)` rebuilds the exact view a resumed session must continue from.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mini_agent.instructions import explicit_instructions
from mini_agent.messages import MessageParam
from mini_agent.usage import Usage

SUMMARY_HINT = "context_summary"


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
    instructions: list[str] = field(default_factory=list)
    """Every explicit instruction the user typed, verbatim, in order: compaction must keep them all."""
    log: list[dict] = field(default_factory=list)
    """Append-only record: {"type": "message", ...} and {"type": "compaction", ...} entries."""
    compactions: int = 0

    def begin_turn(self, text: str, blocks: list[dict] | tuple = ()) -> None:
        """Record what the user typed, as typed, with injected context as separate blocks after it."""
        self.request = text
        for instruction in explicit_instructions(text):
            if instruction not in self.instructions:
                self.instructions.append(instruction)
        self.append({"role": "user", "content": [{"type": "text", "text": text}, *blocks]})

    def append(self, message: MessageParam) -> None:
        self.log.append({"type": "message", "message": message})
        _append_merged(self.messages, message)

    def replace_view(self, messages: list[MessageParam], summary_hint: str | None, detail: dict) -> None:
        """Compaction: the model sees `messages` from now on; the log keeps the full history and a marker."""
        self.compactions += 1
        if summary_hint is not None:
            self.hints[SUMMARY_HINT] = summary_hint
        self.messages = messages
        self.log.append(
            {
                "type": "compaction",
                "view": messages,
                "summary_hint": self.hints.get(SUMMARY_HINT),
                "instructions": list(self.instructions),
                **detail,
            }
        )

    def record_usage(self, usage: Usage) -> None:
        self.usage = self.usage + usage
        self.last_usage = usage

    @classmethod
    def restore(cls, log: list[dict]) -> Session:
        """The session a log describes: the last compacted view plus everything appended after it."""
        session = cls(log=list(log))
        for entry in log:
            if entry["type"] == "compaction":
                session.messages = list(entry["view"])
                session.compactions += 1
                if entry.get("summary_hint"):
                    session.hints[SUMMARY_HINT] = entry["summary_hint"]
                session.instructions = list(entry.get("instructions", session.instructions))
            elif entry["type"] == "message":
                message = entry["message"]
                _append_merged(session.messages, message)
                if message["role"] == "user":
                    typed = _typed_text(message)
                    if typed is not None:
                        session.request = typed
                        for instruction in explicit_instructions(typed):
                            if instruction not in session.instructions:
                                session.instructions.append(instruction)
        return session


def _append_merged(messages: list[MessageParam], message: MessageParam) -> None:
    last = messages[-1] if messages else None
    if last is not None and last["role"] == message["role"] == "user":
        # The previous turn ended without a reply to its last user message (interrupted, cut, refused): fold
        # the new blocks into it so roles keep alternating on every endpoint. A new dict, so the log's copy
        # of the earlier message stays as it was.
        messages[-1] = {**last, "content": [*_blocks(last), *_blocks(message)]}
    else:
        messages.append(message)


def _blocks(message: MessageParam) -> list:
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _typed_text(message: MessageParam) -> str | None:
    """The user's own words in a message begun by begin_turn (its first block), None for tool results."""
    content = message["content"]
    if isinstance(content, str):
        return content
    first = content[0] if content else None
    if first and first.get("type") == "text":
        from mini_agent.context import is_injected

        return None if is_injected(first) else first["text"]
    return None
