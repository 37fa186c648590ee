"""How the REPL's Markdown looks, where rich's defaults do not suit a terminal agent: headings on the left like
the text under them, ordered lists with the numbers and delimiters the model wrote (`3.`, `7)`), and inline
code in a colour of the terminal's own palette with no background, readable on light and dark themes alike."""

from __future__ import annotations

import functools

INLINE_CODE = "bold cyan"
"""A named ANSI colour, which every terminal theme maps to something legible on its own background; rich's
default adds a black background, a dark blot in the middle of a line on a light theme."""


@functools.cache
def theme():
    from rich.theme import Theme

    return Theme({"markdown.code": INLINE_CODE}, inherit=False)


@functools.cache
def elements() -> dict:
    """The rich Markdown element classes that replace the defaults, by markdown-it token type."""
    from rich.markdown import Heading, ListElement, ListItem
    from rich.segment import Segment

    from mini_agent.ui import markdown_text

    class LeftHeading(Heading):
        LEVEL_ALIGN = dict.fromkeys(("h1", "h2", "h3", "h4", "h5", "h6"), "left")

        def __rich_console__(self, console, options):
            text = self.text.copy()
            text.justify = self.LEVEL_ALIGN.get(self.tag, "left")
            yield from markdown_text.laid_out(text, console, options)

    class NumberedItem(ListItem):
        label = ""

        @classmethod
        def create(cls, markdown, token) -> NumberedItem:
            item = cls()
            item.label = f"{token.info}{token.markup}" if token.info else ""
            return item

        def render_bullet(self, console, options):  # rich's, with the item's lines from item_lines
            narrower = options.update(width=options.max_width - 3)
            lines = markdown_text.item_lines(self.elements, console, narrower, self.style)
            style = console.get_style("markdown.item.bullet", default="none")
            bullet, padding, end = Segment(" • ", style), Segment("   ", style), Segment("\n")
            for index, line in enumerate(lines):
                yield padding if index else bullet
                yield from line
                yield end

    class SourceNumberedList(ListElement):
        def __rich_console__(self, console, options):
            if self.list_type == "bullet_list_open":
                yield from super().__rich_console__(console, options)
                return
            start = self.list_start or 1
            labels = [item.label or f"{start + index}." for index, item in enumerate(self.items)]
            width = max(len(label) for label in labels) + 2
            style = console.get_style("markdown.item.number", default="none")
            for item, label in zip(self.items, labels, strict=True):
                narrower = options.update(width=options.max_width - width)
                lines = markdown_text.item_lines(item.elements, console, narrower)
                for index, line in enumerate(lines):
                    yield Segment(label.rjust(width - 1) + " " if index == 0 else " " * width, style)
                    yield from line
                    yield Segment("\n")

    return {
        "heading_open": LeftHeading,
        "bullet_list_open": SourceNumberedList,
        "ordered_list_open": SourceNumberedList,
        "list_item_open": NumberedItem,
    }
