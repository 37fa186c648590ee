"""A reply rebuilt from the SDK's stream events, tolerant of the gaps compatible servers leave.

The SDK parses the server-sent events; its own accumulator gives up on the first event out of order. Servers such
as llama.cpp's send `message_start` late, with the first token, and can drop the event of a token that ends inside
a UTF-8 character, so a block's deltas may arrive for an index that never started. Everything that did arrive is
kept: a missing `message_start` is rebuilt, a block is started by its first delta, usage is taken from whichever
event carries it. What cannot be rebuilt (tool input with no tool name) makes the stream malformed, and a stream
without its end is a cut one: both are retried by the caller. A tool's input is the concatenated `partial_json`
text parsed strictly once its block ends: input that does not parse whole marks the call cut, whatever the
stop reason says (the SDK's own helpers complete it with a partial-JSON parser, which is how a cut
`rm -rf build/old` became `rm -rf build`).
"""

from __future__ import annotations

import json
from typing import Any

from mini_agent.model.faults import StreamCut
from mini_agent.model.wellformed import CUT_INPUT

_IMPLIED_BLOCKS = {
    "text_delta": lambda: {"type": "text", "text": ""},
    "citations_delta": lambda: {"type": "text", "text": ""},
    "thinking_delta": lambda: {"type": "thinking", "thinking": "", "signature": ""},
    "signature_delta": lambda: {"type": "thinking", "thinking": "", "signature": ""},
}
"""The block a delta belongs to, for deltas whose block never started."""


class MalformedStream(ValueError):
    """The events cannot make a reply (a tool's input with no tool, a block index that is not a number)."""


class StreamAssembly:
    """Feed it the raw stream events in order (`add`), then take the message (`message`)."""

    def __init__(self) -> None:
        self.started: dict[str, Any] | None = None
        self.blocks: dict[int, dict[str, Any]] = {}
        self.open_tools: set[int] = set()
        """Blocks whose tool input is streaming; it is parsed when the block (or the message) ends."""
        self.pieces: dict[tuple[int, str], list[str]] = {}
        """Streamed text per (block, field), joined once at the end: appending to a string would copy it per delta."""
        self.usage: dict[str, Any] = {}
        self.ending: dict[str, Any] = {}
        self.stopped = False
        self.events = 0
        self.thoughts: list[tuple[str, bool]] = []
        """Thinking blocks that ended since last taken (`take_thoughts`): (text, redacted)."""

    def add(self, event: dict[str, Any]) -> str | None:
        """Take one event (as the JSON the server sent); returns text to show as it streams, if any."""
        self.events += 1
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message") or {}
            self.started = {k: v for k, v in message.items() if k not in ("content", "usage")}
            self._usage(message.get("usage"))
        elif kind == "content_block_start":
            block = event.get("content_block")
            if isinstance(block, dict):
                index = self._index(event)
                # A second start for a block already streaming (llama.cpp's final chunk can repeat one) adds only
                # what the block lacks; it never wipes what the deltas built.
                self.blocks[index] = {**block, **self.blocks[index]} if index in self.blocks else dict(block)
        elif kind == "content_block_delta":
            return self._delta(self._index(event), event.get("delta") or {})
        elif kind == "content_block_stop":
            self._close(self._index(event))
            self._thought(self._index(event))
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            self.ending.update({k: v for k, v in delta.items() if v is not None})
            self._usage(event.get("usage"))
        elif kind == "message_stop":
            self.stopped = True
        return None

    def message(self) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The whole message in the API's shape, and the usage the stream reported (None: none at all)."""
        if not self.stopped and not self.ending.get("stop_reason"):
            raise StreamCut(self.events)
        for index in list(self.open_tools):
            self._close(index)
        self._join()
        message = dict(self.started or {"type": "message", "role": "assistant"})
        message.update(self.ending)
        for block in self.blocks.values():
            if block.get("type") in ("tool_use", "server_tool_use") and "input" not in block:
                block["input"] = {}  # llama.cpp starts a tool block without `input`; a call with no arguments
        message["content"] = [self.blocks[index] for index in sorted(self.blocks)]
        return message, (self.usage or None)

    def take_thoughts(self) -> list[tuple[str, bool]]:
        """The thinking blocks that ended since the last call, for the REPL's folded line."""
        taken, self.thoughts = self.thoughts, []
        return taken

    # ---- pieces -------------------------------------------------------------------------------------------

    def _thought(self, index: int) -> None:
        block = self.blocks.get(index) or {}
        if block.get("type") == "thinking":
            text = "".join(piece for piece in self.pieces.get((index, "thinking"), ()) if isinstance(piece, str))
            self.thoughts.append((text or str(block.get("thinking") or ""), False))
        elif block.get("type") == "redacted_thinking":
            self.thoughts.append(("", True))

    def _index(self, event: dict[str, Any]) -> int:
        index = event.get("index", 0)
        if not isinstance(index, int) or isinstance(index, bool):
            raise MalformedStream(f"a block index that is not a number: {index!r}")
        return index

    def _usage(self, usage: object) -> None:
        if isinstance(usage, dict):
            self.usage.update({k: v for k, v in usage.items() if v is not None})

    def _delta(self, index: int, delta: dict[str, Any]) -> str | None:
        kind = delta.get("type")
        block = self.blocks.get(index)
        if block is None:
            if kind == "input_json_delta":
                raise MalformedStream(f"tool input for block {index}, which never said which tool it calls")
            block = self.blocks[index] = _IMPLIED_BLOCKS.get(kind, lambda: {"type": "text", "text": ""})()
        if kind == "text_delta":
            piece = delta.get("text") or ""
            self._append(index, "text", piece)
            return piece or None
        if kind == "input_json_delta":
            self._append(index, "input", delta.get("partial_json") or "")
            self.open_tools.add(index)
        elif kind == "thinking_delta":
            self._append(index, "thinking", delta.get("thinking") or "")
        elif kind == "signature_delta":
            self._append(index, "signature", delta.get("signature") or "")
        elif kind == "citations_delta":
            block.setdefault("citations", []).append(delta.get("citation"))
        else:  # a delta type added to the API later: strings append, other values replace
            for key, value in delta.items():
                if key != "type":
                    current = block.get(key)
                    both_text = isinstance(current, str) and isinstance(value, str)
                    block[key] = current + value if both_text else value
        return None

    def _append(self, index: int, field: str, piece: str) -> None:
        pieces = self.pieces.get((index, field))
        if pieces is None:
            current = self.blocks[index].get(field) if field != "input" else None
            pieces = self.pieces[(index, field)] = [current] if isinstance(current, str) and current else []
        pieces.append(piece)

    def _join(self) -> None:
        for (index, field), pieces in self.pieces.items():
            if field != "input":
                self.blocks[index][field] = "".join(pieces)
        self.pieces = {key: pieces for key, pieces in self.pieces.items() if key[1] == "input"}

    def _close(self, index: int) -> None:
        """A tool block's input is its streamed JSON once the block ends (the start's `{}` if none came)."""
        if index not in self.open_tools:
            return
        self.open_tools.discard(index)
        raw = "".join(self.pieces.pop((index, "input"), ()))
        if not raw.strip():
            return
        block = self.blocks[index]
        try:
            block["input"] = json.loads(raw)
        except ValueError:
            # Cut short (at the output limit, or by a gateway or server that still says `tool_use`): the call is
            # kept as far as it arrived, never completed by guessing, and never run (replies.py).
            block["input"] = {}
            block[CUT_INPUT] = raw
