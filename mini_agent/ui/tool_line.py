"""A finished tool call as one line, `● bash(make test) ✗ exit 2 · 0.4s`, the same in the REPL and in `-p` progress.

Pure text: the REPL colours and fits it to the terminal, `-p` writes it to stderr as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mini_agent.context.call_lines import INTERRUPTED
from mini_agent.ui.terminal_text import visible

if TYPE_CHECKING:
    from mini_agent.events import ToolFinished
    from mini_agent.tools.base import Tool


def describe_call(name: str, arguments: Any, tool: Tool | None) -> str:
    """`tool(key argument)` in one line, for progress output and confirmations: for a terminal, its control
    characters shown by name (a CR is `⟨CR⟩`, not a space like other white space). `tool` is the tool called
    (None: no tool has that name), whose declaration says which argument is the key one."""
    value = key_argument(tool, arguments, visible)
    return f"{visible(name)}({value})" if value else visible(name)


def key_argument(tool: Tool | None, arguments: Any, shown: Callable[[str], str] = str) -> str:
    """The argument that says what a call does (the command, the path, the URL) on one line, at most 100
    characters; empty for a tool without one. `shown` is applied before white space is run together."""
    key = tool.key_argument if tool is not None else None
    value = arguments.get(key, "") if key and isinstance(arguments, dict) else ""
    value = " ".join(shown(str(value)).split())
    return value[:97] + "..." if len(value) > 100 else value


def first_line(text: str, limit: int = 160) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


DETAIL_LINES = 4
"""Lines of an error's detail (or of a failed command's output) under its tool line."""
_HINT = re.compile(r"<system_hint\b.*?</system_hint>", re.DOTALL)


@dataclass(frozen=True)
class Glyphs:
    call: str
    ok: str
    fail: str
    separator: str
    ellipsis: str
    spinner: str
    """The name of one of rich's spinners."""


UNICODE = Glyphs(call="●", ok="✓", fail="✗", separator=" · ", ellipsis="…", spinner="dots")
ASCII = Glyphs(call="*", ok="+", fail="x", separator=" | ", ellipsis="...", spinner="line")


@dataclass(frozen=True)
class ToolLine:
    head: str
    """The glyph and the call: `● bash(make test)`."""
    outcome: str
    """`✓ 0.4s`, `✓ 0.4s · exit 0`, `✗ exit 2 · 0.4s`, `✗ not run`, or `✗` and the first line of the error."""
    ok: bool
    detail: list[str]
    """A few lines under it: the rest of an error, or the end of a failed command's output."""
    content: str
    """The result without system hints."""
    note: str | None = None
    """A refusal's plain line for the human (the model got a longer text), to be shown whole, never cut."""

    def __str__(self) -> str:
        return f"{self.head} {self.outcome}"


def tool_line(event: ToolFinished, glyphs: Glyphs) -> ToolLine:
    g = glyphs
    head = f"{g.call} {describe_call(event.name, event.input, event.tool)}"
    content = _HINT.sub("", event.result.content)
    exit_code = event.result.exit_code
    if event.result.shown:
        return ToolLine(head, f"{g.fail} not run", False, [], content, event.result.shown)
    if event.result.killed_by == INTERRUPTED:  # what it printed until Ctrl-C, its last lines, as the model got it
        printed = content.split("\nOutput so far:\n", 1)[1] if "\nOutput so far:\n" in content else ""
        tail = [line for line in printed.strip().splitlines() if line.strip()][-DETAIL_LINES:]
        return ToolLine(head, f"{g.fail} interrupted{g.separator}{event.duration:.1f}s", False, tail, content)
    if event.result.is_error:
        detail = [line for line in content.strip().splitlines()[1:] if line.strip()][:DETAIL_LINES]
        return ToolLine(head, f"{g.fail} {first_line(content)}", False, detail, content)
    if exit_code:
        output = [line for line in content.strip().splitlines()[:-1] if line.strip()]
        outcome = f"{g.fail} exit {exit_code}{g.separator}{event.duration:.1f}s"
        return ToolLine(head, outcome, False, output[-DETAIL_LINES + 1 :], content)
    exit_note = f"{g.separator}exit 0" if exit_code == 0 else ""
    return ToolLine(head, f"{g.ok} {event.duration:.1f}s{exit_note}", True, [], content)
