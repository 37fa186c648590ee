"""Renderers: turn the core's events into text for a terminal, a log, or a script.

Plain renderers write with `print` to injected streams and import nothing heavy; the rich renderer for
interactive use lives in app/repl.py. What the text renderers write passes `visible` (ui/terminal_text.py):
a command's or the model's escape sequences are shown, not sent. The JSON renderers write data, escaped by JSON.
"""

from __future__ import annotations

import json
from typing import TextIO

from mini_agent.context.call_lines import INTERRUPTED
from mini_agent.context.reports import ContextInjected, ImagesAttached
from mini_agent.events import (
    AssistantMessage,
    Compacted,
    Event,
    HintChanged,
    HookRan,
    Notice,
    ReplyDiscarded,
    SubAgentEvent,
    ToolDenied,
    ToolFinished,
    ToolStarted,
)
from mini_agent.model.messages import text_of, tool_uses
from mini_agent.ui.claude_shapes import api_message, stamp, user_record
from mini_agent.ui.event_lines import attachment_lines, nested_line
from mini_agent.ui.terminal_text import visible
from mini_agent.ui.tool_line import ASCII, UNICODE, describe_call, key_argument, tool_line

__all__ = ["describe_call"]  # where the approval view and the REPL have always found it


def denial_record(event: ToolDenied) -> dict:
    """A refused call for scripts: the `permission_denials` items of the result, and the stream-json event."""
    return {
        "tool_use_id": event.tool_use_id,
        "tool": event.name,
        "input": key_argument(event.tool, event.input),
        **event.denial.to_dict(),
        # Claude Code's two fields, for scripts written for `claude -p`: its tool name where the tool has one.
        "tool_name": (event.tool.alias if event.tool is not None else None) or event.name,
        "tool_input": event.input,
    }


class ProgressRenderer:
    """For `--output-format text`: progress lines on stderr; the final answer is printed by the caller."""

    def __init__(self, err: TextIO, trace: bool = False) -> None:
        self.err, self.trace = err, trace
        self.utf = (getattr(err, "encoding", None) or "utf-8").lower().replace("-", "").startswith("utf")
        """Whether stderr takes the REPL's glyphs; an ASCII locale gets `*`, `+`, `x`."""

    def __call__(self, event: Event) -> None:
        if isinstance(event, SubAgentEvent):
            line = nested_line(event, UNICODE if self.utf else ASCII)
            if line:
                self._line(line)
        elif isinstance(event, ContextInjected):
            if self.trace:
                from mini_agent.ui.trace import format_trace

                for line in format_trace(event.trace):
                    self._line(line)
        elif isinstance(event, HookRan):
            if self.trace:
                from mini_agent.ui.trace import format_hook

                self._line(format_hook(event))
        elif isinstance(event, Compacted):
            from mini_agent.ui.trace import format_compaction

            self._line(f"! {format_compaction(event.report)}")
        elif isinstance(event, ImagesAttached):
            for line in attachment_lines(event):
                self._line(line)
        elif isinstance(event, AssistantMessage):
            text = text_of(event.message).strip()
            if text and tool_uses(event.message):  # words on the way; the final answer goes to stdout
                self._line(text)
        elif isinstance(event, ToolFinished):  # one line once the call is done, as the REPL prints it
            glyphs = UNICODE if self.utf else ASCII
            shown = tool_line(event, glyphs)
            # a refusal's plain line is shown whole, on the same line: a flag cut in two is useless
            self._line(f"{shown.head} {glyphs.fail} {shown.note}" if shown.note else str(shown))
            if event.result.killed_by == INTERRUPTED:  # what it printed until Ctrl-C, as the model got it
                for text in shown.detail:
                    self._line(f"    {text}")
            if event.result.todos is not None:
                from mini_agent.ui.todo_view import todo_lines

                for text, _ in todo_lines(event.result.todos, self.utf):
                    self._line(f"    {text}")
        elif isinstance(event, ReplyDiscarded):
            self._line(f"! {event.retrying()} (retry {event.attempt}).")
        elif isinstance(event, Notice):
            self._line(f"! {event.text}")
        elif isinstance(event, HintChanged) and event.key.startswith("tool_degraded:"):
            tool = event.key.split(":", 1)[1]
            self._line(
                f"! {tool} keeps failing on the network; the model was told to avoid it"
                if event.text
                else f"! {tool} works again"
            )

    def _line(self, text: str) -> None:
        print(visible(text), file=self.err, flush=True)


class QuietRenderer:
    """For `--output-format json`: nothing until the single result object, except notices on stderr."""

    def __init__(self, err: TextIO) -> None:
        self.err = err

    def __call__(self, event: Event) -> None:
        if isinstance(event, Notice):
            print(visible(f"! {event.text}"), file=self.err, flush=True)
        elif isinstance(event, ImagesAttached):
            for line in attachment_lines(event):
                if line.startswith("!"):
                    print(visible(line), file=self.err, flush=True)
        elif isinstance(event, ReplyDiscarded):
            print(visible(f"! {event.retrying()}."), file=self.err, flush=True)


class StreamJsonRenderer:
    """For `--output-format stream-json`: one JSON object per line, per step, as it happens; the records Claude
    Code also has in its shapes (ui/claude_shapes.py)."""

    def __init__(self, out: TextIO, trace: bool = False) -> None:
        self.out, self.trace = out, trace
        """`trace`: the turn's context trace (bulky) goes out only with --trace."""
        self.session_id: str | None = None
        """The session the records belong to, once it is known (Claude Code's `session_id` on each)."""
        self._tasks: dict[str, str] = {}
        """A running sub-agent's description -> the id of the `task` call that started it."""

    def write(self, record: dict) -> None:
        self.out.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.out.flush()

    def __call__(self, event: Event) -> None:
        if isinstance(event, ContextInjected | HookRan) and not self.trace:
            return
        for thought in thinking_records(event):
            self.write(thought)
        inner, parent = event, None
        if isinstance(event, SubAgentEvent):
            inner, parent = event.event, self._tasks.get(event.description)
        elif isinstance(event, ToolStarted) and isinstance(event.input, dict):
            described = event.input.get("description")
            if isinstance(described, str) and event.tool is not None and event.tool.key_argument == "description":
                self._tasks[described] = event.tool_use_id  # a sub-agent's records name the call that started it
        if isinstance(inner, ToolFinished):  # before mini-agent's tool_result, which a permission_denial follows
            self.write(stamp(user_record(inner), self.session_id, parent))
        record = stream_record(event)
        if record is not None:
            if isinstance(inner, AssistantMessage):
                record = stamp({**record, "message": api_message(inner)}, self.session_id, parent)
            self.write(record)


def thinking_records(event: Event) -> list[dict]:
    """A reply's thinking blocks as records of their own, before its `assistant` record: `thinking` (the text as
    sent; empty where the endpoint omits it) or `redacted` true (encrypted by the provider)."""
    subagent = None
    if isinstance(event, SubAgentEvent):
        subagent = {"id": event.agent_id, "agent": event.name, "description": event.description}
        event = event.event
    if not isinstance(event, AssistantMessage):
        return []
    records = []
    for block in event.message.get("content") or ():
        if isinstance(block, dict) and block.get("type") in ("thinking", "redacted_thinking"):
            redacted = block["type"] == "redacted_thinking"
            record = {"type": "thinking", "step": event.step, "thinking": "" if redacted else block.get("thinking", "")}
            record["redacted"] = redacted
            records.append({**record, "subagent": subagent} if subagent else record)
    return records


def stream_record(event: Event) -> dict | None:
    if isinstance(event, SubAgentEvent):
        record = stream_record(event.event)
        subagent = {"id": event.agent_id, "agent": event.name, "description": event.description}
        return None if record is None else {**record, "subagent": subagent}
    if isinstance(event, AssistantMessage):
        return {
            "type": "assistant",
            "step": event.step,
            "message": event.message,
            "stop_reason": event.stop_reason,
            "usage": event.usage.to_dict(),
        }
    if isinstance(event, ToolStarted):
        return {"type": "tool_call", "id": event.tool_use_id, "name": event.name, "input": event.input}
    if isinstance(event, ToolFinished):
        record = {
            "type": "tool_result",
            "id": event.tool_use_id,
            "name": event.name,
            "is_error": event.result.is_error,
            "exit_code": event.result.exit_code,
            "content": event.result.content,
            "duration_ms": round(event.duration * 1000),
        }
        if event.result.todos is not None:  # the list as the call left it, whole: a script need not parse the text
            record["todos"] = [todo.to_dict() for todo in event.result.todos]
        images = [block["source"].get("media_type") for block in event.result.blocks if block.get("type") == "image"]
        return {**record, "images": images} if images else record  # what was shown; the bytes stay out
    if isinstance(event, ImagesAttached):
        return {"type": "attachment", "images": [image.to_dict() for image in event.images]}
    if isinstance(event, ToolDenied):
        return {"type": "permission_denial", **denial_record(event)}
    if isinstance(event, ReplyDiscarded):
        return {"type": "retry", "attempt": event.attempt, "delay_s": round(event.delay, 3), "reason": event.reason}
    if isinstance(event, Notice):
        return {"type": "notice", "text": event.text}
    if isinstance(event, HintChanged):
        return {"type": "hint", "key": event.key, "text": event.text}
    if isinstance(event, ContextInjected):
        return {"type": "trace", **event.trace.to_dict()}
    if isinstance(event, Compacted):
        return {"type": "compaction", **event.report.to_dict()}
    if isinstance(event, HookRan):
        fields = ("event", "hook", "subject", "exit_code", "outcome")
        return {"type": "hook", **{name: getattr(event, name) for name in fields}, "seconds": round(event.seconds, 3)}
    return None
