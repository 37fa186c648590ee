"""The interactive REPL's view of a turn: streamed Markdown, one line per tool call, a spinner, a status line.

Everything printed fits the console: one-line items are cut with an ellipsis rather than wrapped, NO_COLOR
(rich reads it) drops colour, and a console that cannot encode UTF-8 gets ASCII glyphs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from mini_agent.model.messages import tool_uses
from mini_agent.ui.event_lines import attachment_lines, nested_line
from mini_agent.ui.markdown_stream import MarkdownStream, encodable
from mini_agent.ui.terminal_text import visible
from mini_agent.ui.tool_line import ASCII, UNICODE, Glyphs, describe_call, tool_line

if TYPE_CHECKING:
    from mini_agent.agent import TurnResult
    from mini_agent.context.reports import ImagesAttached
    from mini_agent.conversation import Session
    from mini_agent.events import Event, Thought, ToolFinished

DIFF_LINES = 24


def glyphs_for(console) -> Glyphs:
    return UNICODE if console.encoding.startswith("utf") else ASCII


def clip(text: str, width: int, ellipsis: str = "…") -> str:
    """`text` cut to `width` terminal cells, ending with `ellipsis` when something was cut."""
    from rich.cells import cell_len, set_cell_size

    if cell_len(text) <= width:
        return text
    if width <= cell_len(ellipsis):
        return set_cell_size(ellipsis, max(0, width))
    return set_cell_size(text, width - cell_len(ellipsis)).rstrip() + ellipsis


class Spinner:
    """A transient line, frame + label + elapsed seconds, animated by rich's Live on its own thread."""

    def __init__(self, console, glyphs: Glyphs, clock: Callable[[], float]) -> None:
        self.console, self.glyphs, self.clock = console, glyphs, clock
        self.label, self.since = "", 0.0
        self._live = None
        self._frames = None

    @property
    def running(self) -> bool:
        return self._live is not None

    def show(self, label: str, since: float) -> None:
        self.label, self.since = label, since
        if self._live is None and self.console.is_terminal and not self.console.is_dumb_terminal:
            from rich.live import Live
            from rich.spinner import Spinner as Frames

            self._frames = Frames(self.glyphs.spinner)
            self._live = Live(
                self,
                console=self.console,
                transient=True,
                refresh_per_second=10,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._live.start(refresh=True)

    def stop(self) -> None:
        """Erase the line; safe to call at any time, also while unwinding from Ctrl-C."""
        live, self._live = self._live, None
        if live is not None:
            live.stop()

    def __rich_console__(self, console, options):
        from rich.text import Text

        frame = self._frames.render(self.clock()).plain if self._frames else ""
        elapsed = f"{self.glyphs.separator}{self.clock() - self.since:.0f}s"
        room = options.max_width - len(frame) - len(elapsed) - 1
        label = clip(encodable(console, self.label), room, self.glyphs.ellipsis)
        yield Text.assemble((frame, "cyan"), " ", label, (elapsed, "dim"), no_wrap=True, overflow="crop")


class ReplRenderer:
    """Consumes the core's events for the REPL. Wrap each turn in `turn()`, then call `turn_finished`."""

    def __init__(self, console, trace: bool = False, *, model: str = "", clock: Callable[[], float] = time.monotonic):
        self.console = console
        self.trace = trace
        self.model = model
        self.clock = clock
        self.glyphs = glyphs_for(console)
        self.stream = MarkdownStream(console, clock=clock)
        self.spinner = Spinner(console, self.glyphs, clock)
        self._in_turn = False
        self._waiting_since: float | None = None
        self._running: dict[str, tuple[str, float]] = {}
        self._unfinished: set[str] = set()
        self.thoughts: list[str] = []
        """The thinking of the latest reply that thought, for the key that shows it (Ctrl-O)."""
        self._fresh_reply = True

    @contextmanager
    def turn(self) -> Iterator[None]:
        """A spinner until the first words arrive; on the way out (Ctrl-C too) the terminal is left clean."""
        self._in_turn, self._waiting_since = True, self.clock()
        self._animate()
        try:
            yield
        finally:
            self._in_turn, self._waiting_since = False, None
            self._running.clear()
            self._unfinished.clear()
            self.spinner.stop()
            self.stream.finish()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Stop the spinner while something else uses the terminal (a question to the human)."""
        self.spinner.stop()
        try:
            yield
        finally:
            self._animate()

    def __call__(self, event: Event) -> None:
        # The event classes load with the first event, not before the first prompt (~13 ms of dataclasses).
        from mini_agent.context.reports import ContextInjected, ImagesAttached
        from mini_agent.events import (
            AssistantMessage,
            Compacted,
            HintChanged,
            HookRan,
            ModelSwitched,
            Notice,
            ReplyDiscarded,
            SubAgentEvent,
            TextDelta,
            Thought,
            ToolFinished,
            ToolStarted,
        )

        if isinstance(event, ModelSwitched):
            self.model = event.model  # the status line prices the turns that follow by it
            return None
        if isinstance(event, SubAgentEvent):
            from rich.text import Text

            if line := nested_line(event, self.glyphs):
                self._settle()
                self.console.print(Text(self._plain(line), style="dim"), no_wrap=True, overflow="crop")
            return self._animate()
        if isinstance(event, Thought):
            self._fold(event)
        elif isinstance(event, TextDelta):
            self._waiting_since = None
            self.spinner.stop()
            self.stream.feed(event.text)
            return
        elif isinstance(event, AssistantMessage):
            self._fresh_reply = True
            self._settle()
            if event.stop_reason == "tool_use":
                self._unfinished = {call["id"] for call in tool_uses(event.message)}
            self._waiting_since = self.clock() if event.stop_reason == "pause_turn" else None
        elif isinstance(event, ToolStarted):
            self._settle()
            self._running[event.tool_use_id] = (describe_call(event.name, event.input, event.tool), self.clock())
        elif isinstance(event, ToolFinished):
            self._running.pop(event.tool_use_id, None)
            self._unfinished.discard(event.tool_use_id)
            self._print_tool(event)
            if not self._running and not self._unfinished:
                self._waiting_since = self.clock()  # the results go back to the model now
        elif isinstance(event, ReplyDiscarded):
            self.spinner.stop()
            self.stream.discard()
            self._notice(f"{event.retrying()}.")
            self._waiting_since = self.clock()
        elif isinstance(event, Notice):
            self._notice(event.text)
        elif isinstance(event, ImagesAttached):
            self._attachments(event)
        elif isinstance(event, Compacted):
            from mini_agent.ui.trace import format_compaction

            self._notice(format_compaction(event.report))
        elif isinstance(event, HintChanged) and event.key.startswith("tool_degraded:"):
            tool = event.key.split(":", 1)[1]
            self._notice(
                f"{tool} keeps failing on the network; the model was told to avoid it"
                if event.text
                else f"{tool} works again"
            )
        elif isinstance(event, HookRan) and self.trace:
            from rich.text import Text

            from mini_agent.ui.trace import format_hook

            self._settle()
            self.console.print(Text(self._plain(format_hook(event)), style="dim", overflow="fold"))
        elif isinstance(event, ContextInjected) and self.trace:
            from rich.text import Text

            from mini_agent.ui.trace import format_trace

            self._settle()
            for line in format_trace(event.trace):
                self.console.print(Text(self._plain(line), style="dim", overflow="fold"))
        self._animate()

    def _fold(self, event: Thought) -> None:
        """One dim line per thinking block; its text is kept for `show_thinking`."""
        from rich.text import Text

        from mini_agent.context.tokens import count

        self._settle()
        if self._fresh_reply:
            self.thoughts, self._fresh_reply = [], False
        self.thoughts.append(event.text)
        if event.redacted:
            line = "✻ Thought (encrypted by the provider)"
        elif not event.text:
            line = "✻ Thought (the endpoint did not show it)"
        else:
            line = f"✻ Thought for {count(event.text):,} tokens (Ctrl-O to show)"
        self.console.print(Text(self._plain(line), style="dim"), no_wrap=True, overflow="crop")

    def show_thinking(self) -> None:
        """The latest reply's thinking in full, dim, every control character shown by name (it is model text)."""
        from rich.text import Text

        shown = [text for text in self.thoughts if text]
        if not shown:
            self.console.print(Text("No thinking to show yet.", style="dim"))
            return
        for text in shown:
            body = encodable(self.console, visible(text.expandtabs(4)))
            self.console.print(Text("✻ " + body, style="dim italic"))

    def turn_finished(self, result: TurnResult, session: Session, window: int, size: int) -> None:
        """The status line: this turn's tokens, cache share and cost, the session's cost, context fullness."""
        from rich.text import Text

        from mini_agent.ui.status_line import fitted, status_parts

        self._settle()
        parts = {
            name: self._plain(text) for name, text in status_parts(result, session, window, size, self.model).items()
        }
        line = fitted(parts, self.width, self.glyphs.separator)
        self.console.print(Text(clip(line, self.width, self.glyphs.ellipsis), style="dim"))

    @property
    def width(self) -> int:
        return self.console.width

    def _settle(self) -> None:
        """Before any other output: the reply in progress is complete, the spinner is gone."""
        self.spinner.stop()
        self.stream.finish()

    def _animate(self) -> None:
        if not self._in_turn:
            self.spinner.stop()
        elif self._running:
            labels = list(self._running.values())
            more = f" +{len(labels) - 1} more" if len(labels) > 1 else ""
            self.spinner.show(labels[0][0] + more, min(started for _, started in labels))
        elif self._waiting_since is not None:
            self.spinner.show("waiting for the model", self._waiting_since)
        else:
            self.spinner.stop()

    def _notice(self, text: str) -> None:
        from rich.text import Text

        self._settle()
        self.console.print(Text(self._plain(f"! {text}"), style="yellow"))

    def _attachments(self, event: ImagesAttached) -> None:
        from rich.text import Text

        self._settle()
        for line in attachment_lines(event):
            self.console.print(Text(self._plain(line), style="yellow" if line.startswith("!") else "dim"))

    def _print_tool(self, event: ToolFinished) -> None:
        from rich.text import Text

        self._settle()
        shown = tool_line(event, self.glyphs)
        head, outcome = self._fit(self._plain(shown.head), self._plain(shown.outcome))
        line = Text.assemble((head[:1], "cyan"), head[1:], " ", (outcome, "green" if shown.ok else "red"))
        self.console.print(line, no_wrap=True, overflow="crop")
        if shown.note:
            self.console.print(Text("    " + self._plain(shown.note), style="yellow"))  # wrapped, never cut
        for text in shown.detail:
            self.console.print(Text(clip("    " + self._plain(text), self.width, self.glyphs.ellipsis), style="dim"))
        if event.tool is not None and event.tool.edits_files:
            self._print_diff(shown.content)
        if event.result.todos is not None:
            self.print_todos(event.result.todos, "    ")

    def print_todos(self, todos, indent: str = "") -> None:
        """The todo list, one task a line (ui/todo_view.py), each cut to the width."""
        from rich.text import Text

        from mini_agent.ui.todo_view import todo_lines

        for text, style in todo_lines(todos, self.glyphs is UNICODE):
            self.console.print(Text(clip(indent + self._plain(text), self.width, self.glyphs.ellipsis), style=style))

    def _print_diff(self, content: str) -> None:
        from rich.text import Text

        lines = content.removesuffix("\n").split("\n")  # at line feeds only, as the question does: a CR stays put
        start = next((i for i, line in enumerate(lines) if line.startswith(("--- ", "@@"))), None)
        if start is None or not any(line.startswith("@@") for line in lines[start:]):
            return
        for line in lines[start : start + DIFF_LINES]:
            style = "dim"
            if line.startswith("+") and not line.startswith("+++"):
                style = "green"
            elif line.startswith("-") and not line.startswith("---"):
                style = "red"
            elif line.startswith("@@"):
                style = "cyan"
            self.console.print(Text(clip("    " + self._plain(line), self.width, self.glyphs.ellipsis), style=style))
        if len(lines) - start > DIFF_LINES:
            more = f"    {self.glyphs.ellipsis} {len(lines) - start - DIFF_LINES} more lines"
            self.console.print(Text(more, style="dim"))

    def _fit(self, head: str, tail: str) -> tuple[str, str]:
        """Cut a `head tail` line to the width: the call keeps up to half of it, the outcome the rest."""
        from rich.cells import cell_len

        ellipsis = self.glyphs.ellipsis
        tail = clip(tail, max(1, self.width - min(cell_len(head), self.width // 2) - 1), ellipsis)
        return clip(head, max(1, self.width - cell_len(tail) - 1), ellipsis), tail

    def _plain(self, text: str) -> str:
        """One line with its control characters shown by name (rich would drop a CR, not show it), in what the
        console can encode."""
        return encodable(self.console, visible(text.expandtabs(4)))
