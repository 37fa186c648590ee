"""Laying out Markdown paragraphs, headings, list items and cut code: the segments rich renders for them,
computed without a rich `Text` object per line.

rich wraps a paragraph by dividing it into one `Text` per line, each with its own share of the styles, then
joining them again to render, and a list item's lines go through its render and split once more: most of the
cost of printing a long reply. Here the same rules (rich's word division and fold, the crop to the width, left
justification to the full width, one segment per run of styles) work on offsets into the paragraph's string,
for text whose every character is one cell wide, which is most prose. Code that is cut at the edge, not
highlighted, gets its lines as rich's `Padding` of a `Text` gives them. Anything else (tabs, wide or zero-width
characters, another justification or overflow, overlapping styles) is left to rich. tests/ui/test_markdown_text.py
holds each layout to rich's own output.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from mini_agent.ui.line_breaks import line_breaks

_NOT_PRINTABLE_ASCII = re.compile(r"[^\x20-\x7e\n]")


def laid_out(text, console, options) -> Sequence:
    """What `console.render(text, options)` yields for a rich `Text`: its segments, or `[text]` for rich to
    render where this layout does not apply."""
    layout = _layout(text, options)
    if layout is None:
        return [text]
    joined, spans, width = layout
    return _segments(joined, spans, console)


def laid_out_lines(text, console, options) -> list[list] | None:
    """What `console.render_lines(text, options)` gives for a rich `Text` (each line `width` cells), or None
    where this layout does not apply."""
    layout = _layout(text, options)
    if layout is None:
        return None
    joined, spans, width = layout
    return _lines(joined, spans, width, console)


def item_lines(elements, console, options, style=None) -> list[list]:
    """`console.render_lines(elements, options, style=style)` for the elements of a list item, without passing
    every segment through rich's render and split when they are all paragraphs laid out here."""
    if options.height is None and all(type(element) is paragraph_element() for element in elements):
        lines: list[list] = []
        for element in elements:
            element.text.justify = element.justify
            more = laid_out_lines(element.text, console, options)
            if more is None:
                break
            lines += more
        else:
            if not style:
                return lines
            from rich.segment import Segment

            return [
                [Segment(text, None if control else style + over, control) for text, over, control in line]
                for line in lines
            ]
    return console.render_lines(elements, options, style=style)


@functools.cache
def paragraph_element():
    """rich's Markdown paragraph, laid out here."""
    from rich.markdown import Paragraph

    class LaidOutParagraph(Paragraph):
        def __rich_console__(self, console, options):
            self.text.justify = self.justify
            yield from laid_out(self.text, console, options)

    return LaidOutParagraph


def _layout(text, options) -> tuple[str, list, int] | None:
    """The text's lines joined, each padded to the width, and its styles at their places in them."""
    width = options.max_width
    justify = text.justify or options.justify
    overflow = text.overflow or options.overflow or "fold"
    no_wrap = text.no_wrap if text.no_wrap is not None else options.no_wrap
    plain = text.plain
    spans = text.spans
    if (
        justify != "left"
        or overflow != "fold"
        or no_wrap
        or text.style
        or text.end != "\n"
        or width < 1
        or not _one_cell_each(plain)
        or not _in_order(spans)
    ):
        return None
    lines = [line for start, end in _paragraph_lines(plain) for line in _wrapped(plain, start, end, width)]
    joined = "\n".join(plain[start:end].ljust(width) for start, end in lines)
    return joined, _line_spans(spans, lines, width), width


def code_block(text, console, options) -> Sequence:
    """What `console.render(Padding(text, (0, 0, 0, 1)), options)` yields for code that is cut, not wrapped (a
    `Text` of one style with no_wrap, ellipsis overflow and no end): per line a space, the line cut with an
    ellipsis at the width, the spaces that pad it. Or `[that Padding]` for rich to render."""
    from rich.padding import Padding
    from rich.segment import Segment
    from rich.style import Style

    width = options.max_width - 1
    plain = text.plain
    pad_style = console.get_style("none")
    if (
        text.spans
        or not plain
        or plain.endswith("\n")
        or width < 3
        or options.height is not None
        or text.end
        or not text.no_wrap
        or (text.overflow or options.overflow) != "ellipsis"
        or (text.justify or options.justify or "default") != "default"
        or pad_style
        or not _one_cell_each(plain + "…")
    ):
        return [Padding(text, (0, 0, 0, 1))]
    null = Style.null()
    style = Style.combine((console.get_style("", default=null), console.get_style(text.style))) if text.style else None
    left, end = Segment(" ", pad_style), Segment.line()
    segments = []
    for line in plain.split("\n"):
        if len(line) > width:
            line = line[: width - 1] + "…"
        segments.append(left)
        if line:
            segments.append(Segment(line, style))
        if len(line) < width:
            segments.append(Segment(" " * (width - len(line)), pad_style))
        segments.append(end)
    return segments


def _one_cell_each(plain: str) -> bool:
    if not _NOT_PRINTABLE_ASCII.search(plain):
        return True
    return all(char == "\n" or _cell_size(char) == 1 for char in set(plain))


@functools.cache
def _cell_size(char: str) -> int:
    from rich.cells import get_character_cell_size

    return get_character_cell_size(char)


def _in_order(spans: list) -> bool:
    """Whether the styles follow one another without overlapping, as appended text makes them."""
    end = 0
    for span in spans:
        if span.start < end or span.end <= span.start:
            return False
        end = span.end
    return True


def _paragraph_lines(plain: str) -> list[tuple[int, int]]:
    """The text's own lines (hard breaks), as offsets."""
    lines = []
    start = 0
    while (newline := plain.find("\n", start)) != -1:
        lines.append((start, newline))
        start = newline + 1
    lines.append((start, len(plain)))
    return lines


def _wrapped(plain: str, start: int, end: int, width: int) -> list[tuple[int, int]]:
    """One line of the text cut as rich cuts it: at the break offsets of its word division, each piece then
    cut to `width` (rich drops trailing spaces beyond the width, then crops: the same characters stay)."""
    line = plain[start:end]
    bounds = [0, *line_breaks(line, width), len(line)]
    return [(start + first, start + min(last, first + width)) for first, last in zip(bounds, bounds[1:], strict=False)]


def _line_spans(spans: list, lines: list[tuple[int, int]], width: int) -> list[tuple[int, int, object]]:
    """The styles cut at the lines' ends, at their places in the joined lines (`width` plus a line break
    each). Both lists are in order, so one pass over each."""
    placed = []
    index = 0
    for number, (line_start, line_end) in enumerate(lines):
        base = number * (width + 1) - line_start
        while index < len(spans) and spans[index].end <= line_start:
            index += 1
        scan = index
        while scan < len(spans) and spans[scan].start < line_end:
            start, end, style = spans[scan]
            low, high = max(start, line_start), min(end, line_end)
            if high > low:
                placed.append((base + low, base + high, style))
            scan += 1
    return placed


def _segments(text: str, spans: list[tuple[int, int, object]], console) -> list:
    """`Text.render` of `text` with these styles, and the line break that ends a paragraph."""
    from rich.segment import Segment

    if not spans:
        return [Segment(text), Segment("\n")]
    segments: list = []
    _runs(text, spans, 0, 0, len(text), _styles(console), segments)
    segments.append(Segment("\n"))
    return segments


def _lines(text: str, spans: list[tuple[int, int, object]], width: int, console) -> list[list]:
    """`_segments` split at the line breaks as rich splits them: a run across a break in two, none empty."""
    from rich.segment import Segment

    if not spans:
        return [[Segment(text[start : start + width])] for start in range(0, len(text), width + 1)]
    styles = _styles(console)
    lines = []
    index = 0
    for start in range(0, len(text), width + 1):
        line: list = []
        index = _runs(text, spans, index, start, start + width, styles, line)
        lines.append(line)
    return lines


def _runs(text: str, spans: list, index: int, start: int, end: int, styles, into: list) -> int:
    """Append the runs of `text[start:end]` from `spans[index:]` (in order and apart, so a run is a style over
    the base or the base alone, where rich combines a stack); return the index of the first span left."""
    from rich.segment import Segment

    base, over = styles
    position = start
    while index < len(spans) and spans[index][0] < end:
        low, high, style = spans[index]
        if low > position:
            into.append(Segment(text[position:low], base))
        into.append(Segment(text[low:high], over(style)))
        position = high
        index += 1
    if position < end:
        into.append(Segment(text[position:end], base))
    return index


def _styles(console):
    """The base style of rendered text (rich's for a `Text` without one), and a style over it, cached."""
    from rich.style import Style

    null = Style.null()
    base = console.get_style("", default=null)
    combined: dict = {}

    def over(style):
        found = combined.get(style)
        if found is None:
            found = combined[style] = Style.combine((base, console.get_style(style, default=null)))
        return found

    return base, over
