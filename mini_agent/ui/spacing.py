"""At most one blank line in a row on the REPL's terminal, wherever two printers meet.

The console (rich, on stdout) and the questions (written to stderr) are two streams on one terminal, and each item
that wants a blank line above it used to print its own: after the echoed request's blank line, a question or
`Interrupted.` added a second. Both streams now pass through `TrackedStream`s sharing one `Lines`, a record of how
the terminal's text ends, and an item asks `Lines.apart()` for the line breaks that leave exactly one blank line
above it.

Only what is written through the tracked streams is seen. prompt_toolkit erases its prompt when done
(`erase_when_done`), so the record stays true across prompts.
"""

from __future__ import annotations

import re
from collections import deque
from typing import TextIO

_ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b.?")
"""A CSI sequence (colours, erase, cursor moves), an OSC string, or any other two-byte escape: never text."""
_UP = re.compile(r"\x1b\[(\d*)A")


class Lines:
    """How the terminal's text ends: which of the last rows above the cursor hold text, and whether the cursor's
    row does. Enough of a terminal for what the REPL writes: text, line feeds, CRs, erasing a line, moving the
    cursor up (rich's spinner moves back onto its own row and erases it when it stops)."""

    KEPT = 8

    def __init__(self) -> None:
        self._rows: deque[bool] = deque(maxlen=self.KEPT)
        """The rows above the cursor, the nearest last: whether each holds text."""
        self.text_on_line = False
        self._column_zero = True

    @property
    def blank_above(self) -> int:
        count = 0
        for holds_text in reversed(self._rows):
            if holds_text:
                break
            count += 1
        return count

    def feed(self, written: str) -> None:
        written = self._tail(written)
        position = 0
        for escape in _ESCAPE.finditer(written):
            self._text(written[position : escape.start()])
            self._sequence(escape.group())
            position = escape.end()
        self._text(written[position:])

    def _tail(self, written: str) -> str:
        """A long write's last rows, all that can matter: the KEPT rows kept, and as many more as the write moves
        the cursor up (a redraw of the Markdown block in progress writes a screenful on every delta)."""
        if written.count("\n") <= 2 * self.KEPT:
            return written
        cut = len(written)
        for _ in range(self.KEPT + 1 + sum(int(up.group(1) or 1) for up in _UP.finditer(written))):
            cut = written.rfind("\n", 0, cut)
            if cut < 0:
                return written
        return written[cut + 1 :]  # from the start of a row: nothing before it can reach the state

    def apart(self) -> str:
        """The line breaks that put exactly one blank line between what is above and what is written next."""
        if self.text_on_line:
            return "\n\n"
        return "" if self.blank_above else "\n"

    def _text(self, text: str) -> None:
        for line_end, line in _pieces(text):
            if line.strip(" \t\r"):
                self.text_on_line = True  # a line of spaces (rich pads to the width) still looks blank
            self._column_zero = line.endswith("\r") or (not line and self._column_zero)
            if line_end:
                self._rows.append(self.text_on_line)
                self.text_on_line, self._column_zero = False, True

    def _sequence(self, sequence: str) -> None:
        if sequence.endswith("K") and (sequence == "\x1b[2K" or self._column_zero):
            self.text_on_line = False  # the cursor's row erased (from column 0, or whole)
        elif sequence.startswith("\x1b[") and sequence.endswith("A"):
            for _ in range(int(sequence[2:-1] or 1)):  # up onto rows already written: theirs is the state now
                self.text_on_line = self._rows.pop() if self._rows else False


def _pieces(text: str) -> list[tuple[bool, str]]:
    """`text` split after each line feed: (whether the piece ended a line, the piece without its line feed)."""
    pieces = text.split("\n")
    return [(index < len(pieces) - 1, piece) for index, piece in enumerate(pieces)]


class TrackedStream:
    """A text stream that tells `lines` what passes through it; anything else is the wrapped stream's."""

    def __init__(self, stream: TextIO, lines: Lines) -> None:
        self._stream = stream
        self.lines = lines

    def write(self, text: str) -> int:
        self.lines.feed(text)
        return self._stream.write(text)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def apart(stream) -> str:
    """The line breaks to write to `stream` before a block that wants a blank line above it: counted where the
    stream is tracked; one otherwise (the block follows a finished line, as in a `-p` run's progress)."""
    return stream.lines.apart() if isinstance(stream, TrackedStream) else "\n"
