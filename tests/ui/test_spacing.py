"""Never two blank lines in a row where the REPL's printers meet (ui/spacing.py), checked on a real terminal
emulator's screen (pyte): whatever was written before, `apart()` leaves exactly one blank line above what follows,
or adds none where there are blank lines already."""

from __future__ import annotations

import io

import pyte
from hypothesis import given
from hypothesis import strategies as st

from mini_agent.ui.spacing import Lines, TrackedStream, apart

PIECES = [
    "text",
    "more ",
    "\n",
    "      \n",  # a row of spaces, as rich pads a blank line to the width
    "\x1b[1m",
    "\x1b[0m",
    "\x1b[?25l",
    "\r\x1b[2K",  # the spinner's erase before each frame
    "⠋ wait\x1b[2m · 1s\x1b[0m",
    "\r\n\x1b[?25h\r\x1b[1A\x1b[2K",  # rich's Live stopping: a line feed, back up one row, erase it
    "\x1b]8;id=1;https://example.com\x1b\\link\x1b]8;;\x1b\\",
    "› ask\n\n",
]


def rows(written: str) -> list[str]:
    """The screen after `written`, through the terminal's line discipline (a line feed becomes CR LF)."""
    screen = pyte.Screen(160, 40)  # wider and taller than anything written
    pyte.Stream(screen).feed(written.replace("\n", "\r\n"))
    return [row.rstrip() for row in screen.display]


def blank_rows_above(shown: list[str], marker: str) -> tuple[int, bool]:
    """How many blank rows are directly above the row holding `marker`, and whether text is above them."""
    row = next(index for index, line in enumerate(shown) if marker in line)
    count = 0
    while row - count - 1 >= 0 and not shown[row - count - 1]:
        count += 1
    return count, row - count > 0


@given(st.lists(st.sampled_from(PIECES), max_size=12))
def test_apart_leaves_one_blank_line_above_whatever_came_before(pieces):
    lines = Lines()
    for piece in pieces:
        lines.feed(piece)
    breaks = lines.apart()
    count, text_above = blank_rows_above(rows("".join(pieces) + breaks + "MARK"), "MARK")
    if text_above:
        assert count >= 1, "the next block touches the text above it"
        assert count == 1 or breaks == "", "a blank line added where there was one already"


def test_the_echoed_request_then_a_question_has_one_blank_line_between():
    """The case that printed two: the request's own blank line, the spinner, then a question."""
    out = io.StringIO()
    stream = TrackedStream(out, Lines())
    stream.write("› run the tests\n\n⠋ waiting for the model\r\n\x1b[?25h\r\x1b[1A\x1b[2K")
    stream.write(apart(stream) + "● bash(pytest) needs your approval\n")
    shown = rows(out.getvalue())
    assert shown[:3] == ["› run the tests", "", "● bash(pytest) needs your approval"]


def test_an_untracked_stream_gets_the_one_line_break_a_question_always_had():
    assert apart(io.StringIO()) == "\n"


def test_a_tracked_stream_is_the_stream_it_wraps_for_everything_else():
    out = io.StringIO()
    stream = TrackedStream(out, Lines())
    assert stream.isatty() is False and stream.getvalue() == ""
    stream.write("x")
    assert stream.getvalue() == "x" and stream.lines.text_on_line


@given(st.lists(st.sampled_from(PIECES), min_size=40, max_size=80))
def test_one_long_write_leaves_the_state_its_pieces_leave(pieces):
    """A long write is read from its last rows only (Lines._tail): never a different answer."""
    whole, piecewise = Lines(), Lines()
    whole.feed("".join(pieces))
    for piece in pieces:
        piecewise.feed(piece)
    assert (whole.apart(), whole.blank_above, whole.text_on_line) == (
        piecewise.apart(),
        piecewise.blank_above,
        piecewise.text_on_line,
    )
