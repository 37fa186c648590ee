"""What an editor sees of a turn: the agent's events turned into ACP `session/update` payloads.

Pure translation, no I/O: text deltas become `agent_message_chunk`, thinking `agent_thought_chunk`, a reply's
tool calls a `tool_call` each (pending, as soon as the reply names them, so a permission question can point at
one), then `tool_call_update` in_progress / completed / failed with the result as text, and an edit's change as
ACP diff content. Everything the SDK sends is JSON-encoded by it, so no text the model or a tool produces can
become a protocol message of its own (tests/app/test_acp_updates.py).

The plan seam: a todo list, when the agent has one, maps to an ACP `plan` update (`plan_update`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import ToolCallLocation

from mini_agent.events import (
    AssistantMessage,
    Event,
    Notice,
    ReplyDiscarded,
    SubAgentEvent,
    TextDelta,
    Thought,
    ToolFinished,
    ToolStarted,
)
from mini_agent.tools.base import Tool

KINDS = {"read": "read", "write": "edit", "exec": "execute", "network": "fetch"}
"""A tool's risk -> the ACP tool kind editors pick an icon by; anything else (MCP tools, task) is `other`."""
TITLE_LIMIT = 200


def kind_of(tool: Tool | None) -> str:
    return KINDS.get(tool.risk, "other") if tool is not None else "other"


def title_of(name: str, arguments: Any, tool: Tool | None) -> str:
    """`bash: make test`, `read_file: src/app.py`: the tool and its key argument, on one line."""
    key = tool.key_argument if tool is not None else None
    value = arguments.get(key) if key and isinstance(arguments, dict) else None
    if not isinstance(value, str) or not value.strip():
        return name
    line = " ".join(value.split())
    return f"{name}: {line[:TITLE_LIMIT]}{'…' if len(line) > TITLE_LIMIT else ''}"


def locations_of(arguments: Any, tool: Tool | None, cwd: Path) -> list[ToolCallLocation] | None:
    """The file a file tool reads or changes, absolute, so the editor can follow along."""
    if tool is None or tool.risk not in ("read", "write") or tool.key_argument != "path":
        return None
    path = arguments.get("path") if isinstance(arguments, dict) else None
    if not isinstance(path, str) or not path:
        return None
    return [ToolCallLocation(path=str(cwd / os.path.expanduser(path)))]


def diff_of(arguments: Any, tool: Tool | None, cwd: Path) -> list | None:
    """An edit's change as ACP diff content, from the call's own arguments (no file is read for it): a whole
    new file (`content`), or the replaced text (`old_string` -> `new_string`)."""
    if tool is None or not tool.edits_files or not isinstance(arguments, dict):
        return None
    path = arguments.get(tool.key_argument or "")
    if not isinstance(path, str):
        return None
    where = str(cwd / os.path.expanduser(path))
    if isinstance(arguments.get("content"), str):
        return [tool_diff_content(where, arguments["content"])]
    old, new = arguments.get("old_string"), arguments.get("new_string")
    if isinstance(old, str) and isinstance(new, str):
        return [tool_diff_content(where, new, old)]
    return None


@dataclass
class UpdateMapper:
    """One ACP session's translation; remembers which tool calls the editor has been told of. Thread-safe:
    read-only tools report from worker threads."""

    cwd: Path
    tools: Any = None
    """Looks a tool up by name (the registry's `get`), for calls a reply names before they start."""
    announced: dict[str, tuple[str, Any]] = field(default_factory=dict)
    """Tool call id -> (name, input): told as pending, not yet started."""
    started: dict[str, str] = field(default_factory=dict)
    """Tool name -> the id of its call that started last (web_fetch asks about an address while it runs)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def updates(self, event: Event) -> list:
        with self._lock:
            return list(self._updates(event))

    def _updates(self, event: Event) -> Iterable:
        if isinstance(event, TextDelta):
            if event.text:
                yield update_agent_message_text(event.text)
        elif isinstance(event, Thought):
            if event.text and not event.redacted:
                yield update_agent_thought_text(event.text)
        elif isinstance(event, AssistantMessage):
            yield from self._announce(event.message)
        elif isinstance(event, ToolStarted):
            yield self._started(event.tool_use_id, event.name, event.input, event.tool)
        elif isinstance(event, ToolFinished):
            yield self._finished(event)
        elif isinstance(event, Notice):
            yield update_agent_thought_text(f"mini-agent: {event.text}\n")
        elif isinstance(event, ReplyDiscarded):
            yield update_agent_thought_text(f"mini-agent: {event.retrying()}\n")
        elif isinstance(event, SubAgentEvent):
            yield from self._nested(event)

    def _announce(self, message: dict) -> Iterable:
        for block in message.get("content", ()):
            if block.get("type") != "tool_use" or block.get("id") in self.announced:
                continue
            name, arguments = block.get("name", ""), block.get("input")
            tool = self.tools(name) if self.tools is not None else None
            self.announced[block["id"]] = (name, arguments)
            yield start_tool_call(
                block["id"],
                title_of(name, arguments, tool),
                kind=kind_of(tool),
                status="pending",
                content=diff_of(arguments, tool, self.cwd),
                locations=locations_of(arguments, tool, self.cwd),
                raw_input=arguments,
            )

    def _started(self, call_id: str, name: str, arguments: Any, tool: Tool | None, by: str = ""):
        told = self.announced.pop(call_id, None) is not None
        self.started[name] = call_id
        title, kind = f"{by}{title_of(name, arguments, tool)}", kind_of(tool)
        if not told:  # a call settled before it ran (refused, malformed) or a sub-agent's: new to the editor
            locations = locations_of(arguments, tool, self.cwd)
            return start_tool_call(
                call_id, title, kind=kind, status="in_progress", locations=locations, raw_input=arguments
            )
        return update_tool_call(call_id, status="in_progress")

    def _finished(self, event: ToolFinished):
        result = event.result
        content = [tool_content(text_block(result.content))] if result.content else []
        if not result.is_error:
            content = [*(diff_of(event.input, event.tool, self.cwd) or []), *content]
        return update_tool_call(
            event.tool_use_id,
            status="failed" if result.is_error else "completed",
            content=content,
            raw_output=_raw_output(result),
        )

    def _nested(self, wrapped: SubAgentEvent) -> Iterable:
        """A sub-agent's tool calls show as calls of their own, titled with the agent's name."""
        event = wrapped.event
        if isinstance(event, ToolStarted):
            yield self._started(event.tool_use_id, event.name, event.input, event.tool, f"{wrapped.name} › ")
        elif isinstance(event, ToolFinished):
            yield self._finished(event)

    def pending_call(self, name: str, arguments: dict) -> str | None:
        """The call a permission question is about: an announced one not yet started of the same tool with the
        same arguments, else the first of that tool, else the one of that tool running now."""
        with self._lock:
            same = [call_id for call_id, (called, given) in self.announced.items() if called == name]
            exact = [call_id for call_id in same if self.announced[call_id][1] == arguments]
            return (exact or same or [self.started.get(name)])[0]

    def turn_ended(self) -> list:
        """A turn ended (cancelled, or its reply cut): the calls it announced but never ran, marked failed."""
        with self._lock:
            left, self.announced = list(self.announced), {}
        note = [tool_content(text_block("Not run: the turn ended before this call."))]
        return [update_tool_call(call_id, status="failed", content=note) for call_id in left]


def history_updates(messages: list[dict], tools: Any, cwd: Path) -> list:
    """A stored conversation told again (`session/load`): the user's words, the replies, each call and how it
    ended. A user message's first text block is what was typed; the context added beside it is not shown."""
    updates: list = []
    for message in messages:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        if message.get("role") == "user":
            results = [block for block in blocks if block.get("type") == "tool_result"]
            for block in results:
                text = _result_text(block.get("content"))
                status = "failed" if block.get("is_error") else "completed"
                shown = [tool_content(text_block(text))] if text else []
                updates.append(update_tool_call(block.get("tool_use_id", ""), status=status, content=shown))
            if not results and blocks and blocks[0].get("type") == "text":
                updates.append(update_user_message_text(blocks[0]["text"]))
            continue
        for block in blocks:
            if block.get("type") == "text" and block.get("text"):
                updates.append(update_agent_message_text(block["text"]))
            elif block.get("type") == "thinking" and block.get("thinking"):
                updates.append(update_agent_thought_text(block["thinking"]))
            elif block.get("type") == "tool_use":
                name, arguments = block.get("name", ""), block.get("input")
                tool = tools(name) if tools is not None else None
                updates.append(
                    start_tool_call(block["id"], title_of(name, arguments, tool), kind=kind_of(tool),
                                    status="pending", locations=locations_of(arguments, tool, cwd), raw_input=arguments)
                )  # fmt: skip
    return updates


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content or () if block.get("type") == "text")


def _raw_output(result) -> dict:
    exit_code = {"exit_code": result.exit_code} if result.exit_code is not None else {}
    return {"is_error": result.is_error, **exit_code}


def plan_update(items: Iterable[tuple[str, str]]):
    """A todo list as an ACP plan: (text, status) pairs, status one of pending / in_progress / completed."""
    return update_plan(plan_entry(text, status=status) for text, status in items)
