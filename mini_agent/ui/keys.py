"""Single keys and one short line from the terminal, for the approval question: no Enter needed for `y`.

The terminal is put in cbreak mode only while a key or a line is read (signals stay on, so Ctrl-C is still an
interrupt). Keys typed before the question appeared are discarded: type-ahead meant for the prompt must not
answer a question about running a command.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol, TextIO

ENTER = "\n"
BACKSPACES = ("\x7f", "\x08")
CTRL_D, CTRL_U = "\x04", "\x15"


class Keys(Protocol):
    def discard_typeahead(self) -> None: ...

    def key(self) -> str:
        """One key press: a character, ENTER for Enter; EOFError on Ctrl-D or end of input."""
        ...

    def line(self) -> str:
        """A line typed after the prompt already shown, echoed, with Backspace and Ctrl-U; Enter ends it."""
        ...


class TerminalKeys:
    def __init__(self, fd: int, echo: TextIO) -> None:
        self.fd, self.echo = fd, echo

    def discard_typeahead(self) -> None:
        import termios

        termios.tcflush(self.fd, termios.TCIFLUSH)

    def key(self) -> str:
        with self._cbreak():
            return self._char()

    def line(self) -> str:
        typed: list[str] = []
        with self._cbreak():
            while (char := self._char()) != ENTER:
                if char in BACKSPACES:
                    if typed:
                        typed.pop()
                        self._echo("\b \b")
                elif char == CTRL_U:
                    self._echo("\b \b" * len(typed))
                    typed.clear()
                elif char.isprintable():
                    typed.append(char)
                    self._echo(char)
        self._echo("\n")
        return "".join(typed)

    def _echo(self, text: str) -> None:
        self.echo.write(text)
        self.echo.flush()

    def _char(self) -> str:
        data = os.read(self.fd, 1)
        if not data or data == CTRL_D.encode():
            raise EOFError
        more = _continuation_bytes(data[0])
        while more:  # the rest of a UTF-8 character
            data += os.read(self.fd, 1)
            more -= 1
        char = data.decode("utf-8", errors="replace")
        return ENTER if char == "\r" else char

    @contextmanager
    def _cbreak(self) -> Iterator[None]:
        import termios
        import tty

        saved = termios.tcgetattr(self.fd)
        try:
            tty.setcbreak(self.fd, termios.TCSANOW)
            yield
        finally:
            termios.tcsetattr(self.fd, termios.TCSADRAIN, saved)


def _continuation_bytes(first: int) -> int:
    if first >> 5 == 0b110:
        return 1
    if first >> 4 == 0b1110:
        return 2
    if first >> 3 == 0b11110:
        return 3
    return 0
