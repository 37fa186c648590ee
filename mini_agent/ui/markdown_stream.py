"""Markdown that streams: finished blocks go to the scrollback once, only the block in progress is redrawn.

The text is split into Markdown blocks as it arrives (paragraphs, headings, lists, tables, fenced code, where
a blank line inside a fence does not end the block). A finished block is printed once with rich's Markdown;
the block in progress is drawn below it as a transient region, at most `refresh_per_second` times a second,
from no more of its tail than fits on the screen. So the work per delta follows the size of the current block
and of the screen, never the length of the reply. Without a terminal the text is written as it comes.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mini_agent import gc_pause
from mini_agent.ui.markdown_blocks import BlockSplitter
from mini_agent.ui.terminal_text import visible

HIGHLIGHT_BUDGET = 20_000
"""Characters of code per reply that get syntax highlighting. Highlighting costs ~5 times what plain code does
(pygments alone lexes ~0.4 MB/s), so beyond this a huge reply gets one-colour code and keeps up."""

ASCII_FALLBACK = str.maketrans(
    {"•": "*", "▌": "|", "─": "-", "━": "-", "…": ".", "●": "*", "✓": "+", "✗": "x", "⟨": "<", "⟩": ">"}
)
"""One cell for one cell, so a line keeps its width on a console that cannot encode rich's glyphs."""


@dataclass
class StreamStats:
    """Work counters, so tests can check the cost per delta without timing anything."""

    scanned: int = 0
    """Characters the block splitter looked at."""
    rendered: int = 0
    """Characters of Markdown source handed to rich: committed blocks plus every redraw of the live tail."""
    committed: int = 0
    """Characters of source printed to the scrollback."""
    redraws: int = 0


class MarkdownStream:
    """Renders one reply at a time: `feed` its deltas, then `finish` it. Reusable for the next reply."""

    def __init__(self, console, refresh_per_second: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.console = console
        self.live = console.is_terminal and not console.is_dumb_terminal
        """False without a terminal (a pipe, a file, TERM=dumb): then the text is written as it comes."""
        self.stats = StreamStats()
        self._interval = 1.0 / refresh_per_second
        self._clock = clock
        self._splitter = BlockSplitter()
        self._queue: list[str] = []
        self._region: Any = None
        """The drawing of the block in progress (a rich LiveRender), which knows how to erase itself."""
        self._start_reply()

    def _start_reply(self) -> None:
        self._last_draw = -math.inf
        self._batches = 0
        self._ends_line = True
        self._held_cr = ""
        self._budget = HighlightBudget(HIGHLIGHT_BUDGET)

    def feed(self, delta: str) -> None:
        if not delta:
            return
        if not self.live:
            self.stats.scanned += len(delta)
            text = self._held_cr + delta
            self._held_cr = "\r" if text.endswith("\r") else ""  # the LF that makes it a line ending may follow
            text = visible(text.removesuffix("\r"), crlf_is_newline=True)
            self.console.out(encodable(self.console, text), end="", highlight=False)
            self._ends_line = text.endswith("\n") if text else self._ends_line
            return
        before = self._splitter.scanned
        self._queue += self._splitter.feed(delta)
        self.stats.scanned += self._splitter.scanned - before
        now = self._clock()
        if now - self._last_draw >= self._interval:
            self._last_draw = now
            with self.console:  # one write per redraw: no flicker
                self._commit_queue()
                self._draw()

    def finish(self) -> None:
        """The reply is complete: commit what is left and clear the live region."""
        if self.live:
            before = self._splitter.scanned
            self._queue += self._splitter.finish()
            self.stats.scanned += self._splitter.scanned - before
            with self.console:
                self._commit_queue()
                self._erase()
        else:
            if self._held_cr:
                self.console.out(visible(self._held_cr), end="", highlight=False)
            if not self._ends_line or self._held_cr:
                self.console.out("")
        self._start_reply()

    def discard(self) -> None:
        """The reply is void (it will be retried): clear what is drawn of it; the scrollback keeps what it has."""
        if self.live:
            self._queue = []
            self._splitter = BlockSplitter()
            with self.console:
                self._erase()
        elif not self._ends_line:
            self.console.out("")
        self._start_reply()

    def _commit_queue(self) -> None:
        """Print the blocks finished since the last redraw, once, as one document."""
        if not self._queue:
            return
        source = visible("\n\n".join(self._queue), crlf_is_newline=True)
        self._queue = []
        self._erase()
        lines = self._render(source, self._budget)
        if lines:
            self.console.print(_joined(lines, end=True), crop=False)  # render_lines cut them to the width
            self._batches += 1
        self.stats.rendered += len(source)
        self.stats.committed += len(source)

    def _draw(self) -> None:
        """Redraw the block in progress from the tail that fits the screen, in place of the previous drawing."""
        from rich.live_render import LiveRender

        height = max(1, self.console.height - 1)
        text = self._splitter.tail(self.console.width * height)
        self.stats.rendered += len(text)
        text = visible(text.removesuffix("\r"), crlf_is_newline=True)  # a CR at the end may start a CR LF
        lines = self._render(text, HighlightBudget(self._budget.chars))  # a copy: drawing spends none
        if not lines:
            self._erase()
            return
        self.stats.redraws += 1
        self._erase()
        region = LiveRender(_joined(lines[-height:]), vertical_overflow="crop")
        self.console.print(region, end="")
        self._region = region  # only once drawn: after a Ctrl-C half-way, nothing above it is erased

    def _render(self, source: str, budget: HighlightBudget) -> list[list]:
        """`source` as Markdown lines without blank lines around them, after the one blank line that separates
        them from what is already printed: the same spacing whether blocks are committed together or apart.
        Never two blank lines in a row (rich puts one around a table's edges besides the one between blocks)."""
        with gc_pause.held():  # a burst of short-lived tokens and segments (gc_pause.py)
            return self._laid_out(markdown(source, budget))

    def _laid_out(self, document) -> list[list]:
        if not self.console.encoding.startswith("utf"):
            document = Encodable(document)
        lines = self.console.render_lines(document, self.console.options, pad=False)
        blank = [_blank(line) for line in lines]
        kept = [line for index, line in enumerate(lines) if not (blank[index] and index and blank[index - 1])]
        start, end = 0, len(kept)
        while start < end and _blank(kept[start]):
            start += 1
        while end > start and _blank(kept[end - 1]):
            end -= 1
        if start == end:
            return []
        return ([[]] if self._batches else []) + kept[start:end]

    def _erase(self) -> None:
        if self._region is not None:
            self.console.control(self._region.position_cursor())
            self._region = None


def _blank(line: list) -> bool:
    return not any(segment.text.strip() for segment in line if not segment.control)


def _joined(lines: list[list], end: bool = False):
    """Rendered lines as one renderable; a line break after the last only with `end`."""
    from rich.segment import Segment, Segments

    segments: list = []
    for index, line in enumerate(lines):
        if index:
            segments.append(Segment.line())
        segments += line
    if end:
        segments.append(Segment.line())
    return Segments(segments)


def encodable(console, text: str) -> str:
    """`text` with what the console's encoding cannot represent replaced, so writing it never raises."""
    encoding = console.encoding
    if encoding.startswith("utf"):
        return text
    return text.translate(ASCII_FALLBACK).encode(encoding, "replace").decode(encoding)


class Encodable:
    """Wraps a renderable for a console whose encoding lacks rich's glyphs (bullets, quote bars, ellipses)."""

    def __init__(self, renderable) -> None:
        self.renderable = renderable

    def __rich_console__(self, console, options):
        from rich.segment import Segment

        for segment in console.render(self.renderable, options):
            yield segment if segment.control else Segment(encodable(console, segment.text), segment.style)


@dataclass
class HighlightBudget:
    """Characters of code that may still be syntax-highlighted in this reply."""

    chars: int


def markdown(source: str, budget: HighlightBudget | None = None):
    """rich's Markdown, with code blocks cut (not wrapped) at the edge and highlighted while `budget` lasts.
    Links are written out, never terminal hyperlinks: `[https://github.com/x](https://evil.example)` as a
    hyperlink would show one address and open the other."""
    document = _markdown_class()(source, hyperlinks=False)  # a link shows where it goes: `text (url)`
    document.highlight_budget = budget if budget is not None else HighlightBudget(HIGHLIGHT_BUDGET)
    return document


@functools.cache
def _markdown_class():
    from markdown_it import MarkdownIt
    from rich.markdown import CodeBlock, Markdown
    from rich.syntax import Syntax
    from rich.text import Text

    from mini_agent.ui import markdown_look as look
    from mini_agent.ui import markdown_text

    parser = MarkdownIt().enable("strikethrough").enable("table")  # rich's own configuration

    class Code(CodeBlock):
        budget: HighlightBudget

        @classmethod
        def create(cls, markdown, token) -> CodeBlock:
            block = super().create(markdown, token)
            block.budget = markdown.highlight_budget
            return block

        def __rich_console__(self, console, options):
            code = str(self.text).rstrip()
            if self.budget.chars >= len(code):
                self.budget.chars -= len(code)
                text = Syntax(code, self.lexer_name, theme=self.theme).highlight(code)
            else:
                text = Text(code, style=console.get_style("markdown.code_block", default="none"))
            text.rstrip()  # highlight() ends the code with a line break, which would be a blank line
            text.no_wrap, text.overflow, text.end = True, "ellipsis", ""
            yield from markdown_text.code_block(text, console, options)  # a Padding of one space on the left

    class StreamedMarkdown(Markdown):
        elements = {
            **Markdown.elements,
            **look.elements(),
            "paragraph_open": markdown_text.paragraph_element(),
            "fence": Code,
            "code_block": Code,
        }
        highlight_budget: HighlightBudget

        def __init__(self, markup: str, hyperlinks: bool) -> None:
            """rich's, with its defaults, but one markdown-it parser for every document: rich builds one per
            document, ~0.25 ms of every redraw (test_markdown_text checks the attributes against rich's)."""
            self.markup = markup
            self.parsed = parser.parse(markup)
            self.code_theme = self.inline_code_theme = "monokai"
            self.justify, self.style, self.hyperlinks, self.inline_code_lexer = None, "none", hyperlinks, None

        def __rich_console__(self, console, options):
            console.push_theme(look.theme())  # only while this document renders: the caller's theme is untouched
            try:
                yield from super().__rich_console__(console, options)
            finally:
                console.pop_theme()

    return StreamedMarkdown
