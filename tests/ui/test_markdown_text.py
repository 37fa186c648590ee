"""The paragraph layout gives the segments rich's own Text rendering gives, or hands the text back to rich."""

from __future__ import annotations

import io

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.style import Style
from rich.text import Text
from rich.theme import Theme

from mini_agent.ui import markdown_text
from mini_agent.ui.line_breaks import breaks_by_word, line_breaks
from mini_agent.ui.markdown_stream import markdown
from mini_agent.ui.markdown_text import laid_out

PIECES = st.lists(
    st.sampled_from(list("ab cd-.,!:") + ["  ", "word", "\n", "\u00a0", "\u2014", "é", "\t", "日", "\u200b"]),
    max_size=12,
).map("".join)
STYLES = st.sampled_from([None, "bold", "markdown.code", Style(italic=True), Style(color="red", underline=True)])


def console(width: int, theme: Theme | None = None) -> Console:
    return Console(file=io.StringIO(), width=width, force_terminal=True, color_system="truecolor", theme=theme)


def paragraph(pieces: list[tuple[str, object]], justify: str | None = "left") -> Text:
    """A Text built as rich's Markdown builds a paragraph: one append per piece of inline text."""
    text = Text(justify=justify)
    for piece, style in pieces:
        text.append(piece, style)
    return text


@settings(max_examples=150, deadline=None)
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


WORDS = st.sampled_from(
    ["word", "a", "longer-word", "**bold words**", "*em*", "`code`", "[link](https://example.com/a/b)", "é", "—"]
    + ["x" * 30, "~~gone~~", "日本", "tab\there", "end.  \nbreak"]
)
PROSE = st.lists(WORDS, min_size=1, max_size=30).map(" ".join)
ITEMS = st.lists(st.tuples(PROSE, st.booleans(), st.booleans()), min_size=1, max_size=4)


def _list(items, marker: str) -> str:
    lines = []
    for number, (prose, nested, loose) in enumerate(items, 1):
        lines.append(f"{number}{marker} {prose}" if marker in ".)" else f"{marker} {prose}")
        if nested:
            lines.append(f"   - {prose}")
        if loose:
            lines.append(f"\n   {prose}\n")
    return "\n".join(lines)


BLOCKS = st.one_of(
    PROSE,
    PROSE.map(lambda prose: "## " + prose),
    ITEMS.map(lambda items: _list(items, "-")),
    ITEMS.map(lambda items: _list(items, ".")),
    ITEMS.map(lambda items: _list(items, ")")),
    st.lists(PROSE, max_size=4).map(lambda lines: "```\n" + "\n\n".join(lines) + "\n```"),
    PROSE.map(lambda prose: "> " + prose),
)


THEMES = st.sampled_from([None, Theme({"markdown.item": "italic", "markdown.paragraph": "blue", "markdown.h2": "red"})])


@settings(max_examples=60, deadline=None)
@given(st.lists(BLOCKS, min_size=1, max_size=6).map("\n\n".join), st.integers(min_value=8, max_value=100), THEMES)
def test_a_reply_prints_the_same_bytes_as_through_rich_alone(source, width, theme):
    """The whole Markdown path, against the same document with every layout here handed to rich."""
    from rich.padding import Padding

    fast = _printed(source, width, theme)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(markdown_text, "laid_out", lambda text, console, options: [text])
        patch.setattr(markdown_text, "laid_out_lines", lambda text, console, options: None)
        patch.setattr(markdown_text, "code_block", lambda text, console, options: [Padding(text, (0, 0, 0, 1))])
        assert fast == _printed(source, width, theme)


def _printed(source: str, width: int, theme: Theme | None) -> str:
    terminal = console(width, theme)
    terminal.print(markdown(source))
    return terminal.file.getvalue()


CODE = st.lists(
    st.sampled_from(list("ab (x)=") + ["  ", "\n", "\n\n", "long_identifier_name", "\u00a0", "\t", "日", "…"]),
    max_size=40,
).map("".join)


@settings(max_examples=150, deadline=None)
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


@settings(max_examples=300, deadline=None)
@given(st.one_of(LINES, st.tuples(BLANKS, LINES).map("".join)), st.integers(min_value=1, max_value=16))
@example("a word   bb", 4)
@example("   abcdefgh  ab", 3)
def test_line_breaks_are_rich_own(line, width):
    from rich._wrap import divide_line  # rich's own, which Text.wrap calls

    assert line_breaks(line, width) == divide_line(line, width, fold=True)
    assert breaks_by_word(line, width) == divide_line(line, width, fold=True)


def test_a_document_is_what_rich_makes_of_it_with_one_parser_for_all():
    from rich.markdown import Markdown

    source = "# T\n\nSome *text* and a [link](https://x.y).\n\n- a\n- b\n\n| a |\n|---|\n| 1 |\n"
    ours, once_more = vars(markdown(source)), vars(markdown(source))
    rich_own = vars(Markdown(source, hyperlinks=False))
    assert ours.pop("highlight_budget") and once_more.pop("highlight_budget")
    assert ours == rich_own == once_more
