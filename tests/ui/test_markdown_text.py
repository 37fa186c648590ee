"""The paragraph layout gives the segments rich's own Text rendering gives, or hands the text back to rich."""

from __future__ import annotations

import io

from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.style import Style
from rich.text import Text

from mini_agent.ui import markdown_text
from mini_agent.ui.markdown_stream import markdown
from mini_agent.ui.markdown_text import laid_out

PIECES = st.lists(
    st.sampled_from(list("ab cd-.,!:") + ["  ", "word", "\n", "\u00a0", "\u2014", "é", "\t", "日", "\u200b"]),
    max_size=12,
).map("".join)
STYLES = st.sampled_from([None, "bold", "markdown.code", Style(italic=True), Style(color="red", underline=True)])


def console(width: int) -> Console:
    return Console(file=io.StringIO(), width=width, force_terminal=True, color_system="truecolor")


def paragraph(pieces: list[tuple[str, object]], justify: str | None = "left") -> Text:
    """A Text built as rich's Markdown builds a paragraph: one append per piece of inline text."""
    text = Text(justify=justify)
    for piece, style in pieces:
        text.append(piece, style)
    return text


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(PIECES, STYLES), max_size=12), st.integers(min_value=1, max_value=30))
@example([("averyveryverylongword   and   more   ", "bold"), ("   ", None), ("x" * 40, None)], 7)
@example([("trailing spaces" + " " * 30, "bold"), ("\n\nnext", Style(italic=True))], 10)
def test_the_layout_is_rich_own(pieces, width):
    terminal = console(width)
    text = paragraph(pieces)
    options = terminal.options
    segments = laid_out(text, terminal, options)
    expected = list(terminal.render(paragraph(pieces), options))
    if segments == [text]:
        assert any(char in text.plain for char in "\t日\u200b")  # only what it cannot measure goes to rich
    else:
        assert segments == expected


def test_what_it_does_not_lay_out_goes_to_rich():
    terminal = console(40)
    for text in (
        paragraph([("centred", None)], justify="center"),
        paragraph([("a\ttab", None)]),
        paragraph([("wide 日本", None)]),
        Text("no end", end=""),
        Text("styled whole", style="bold", justify="left"),
    ):
        assert laid_out(text, terminal, terminal.options) == [text]
    overlapping = paragraph([("some words", None)])
    overlapping.stylize("bold", 0, 6)
    overlapping.stylize("italic", 3, 9)
    assert laid_out(overlapping, terminal, terminal.options) == [overlapping]


def test_a_reply_renders_the_same_bytes_as_through_rich_text(monkeypatch):
    """The whole Markdown path, against the same documents with every paragraph and heading left to rich."""
    source = (
        "## A *heading* with `code`\n\nSome **bold** and *em* and a [link](https://example.com/x) "
        + "word " * 40
        + "  \nafter a hard break.\n\n- item **one** "
        + "long " * 30
        + "\n- item two\n\n1. first\n2) second\n\n> quoted *text* "
        + "q " * 50
        + "\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    )
    widths = (100, 37, 12)
    fast = [_printed(source, width) for width in widths]
    monkeypatch.setattr(markdown_text, "laid_out", lambda text, console, options: [text])
    assert fast == [_printed(source, width) for width in widths]


def _printed(source: str, width: int) -> str:
    terminal = console(width)
    terminal.print(markdown(source))
    return terminal.file.getvalue()


CODE = st.lists(
    st.sampled_from(list("ab (x)=") + ["  ", "\n", "\n\n", "long_identifier_name", "\u00a0", "\t", "日", "…"]),
    max_size=40,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(CODE, st.integers(min_value=1, max_value=30), st.sampled_from([None, "markdown.code_block", "bold red"]))
def test_code_is_cut_as_rich_pads_and_cuts_it(code, width, style):
    from rich.padding import Padding

    terminal = console(width)

    def text() -> Text:
        made = Text(code.rstrip(), style=style or "")
        made.no_wrap, made.overflow, made.end = True, "ellipsis", ""
        return made

    segments = markdown_text.code_block(text(), terminal, terminal.options)
    expected = list(terminal.render(Padding(text(), (0, 0, 0, 1)), terminal.options))
    if len(segments) == 1 and isinstance(segments[0], Padding):
        assert width < 4 or not code.strip() or any(char in code for char in "\t日")
    else:
        assert segments == expected


BLANKS = st.sampled_from([" ", " ", "  ", "    ", "\u00a0"])
LINES = st.lists(st.tuples(st.integers(min_value=0, max_value=14), BLANKS), max_size=12).map(
    lambda words: "".join("x" * size + blank for size, blank in words)
)


@settings(max_examples=600, deadline=None)
@given(st.one_of(LINES, st.tuples(BLANKS, LINES).map("".join)), st.integers(min_value=1, max_value=16))
@example("a word   bb", 4)
@example("   abcdefgh  ab", 3)
def test_line_breaks_are_rich_own(line, width):
    from rich._wrap import divide_line  # rich's own, which Text.wrap calls

    assert markdown_text._breaks(line, width) == divide_line(line, width, fold=True)
    assert markdown_text._breaks_by_word(line, width) == divide_line(line, width, fold=True)
