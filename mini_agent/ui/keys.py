"""Single keys and one short line from the terminal, for the approval question: no Enter needed for `y`.

The terminal is put in cbreak mode only while a key or a line is read (signals stay on, so Ctrl-C is still an
interrupt). Keys typed before the question appeared are discarded: type-ahead meant for the prompt must not
answer a question about running a command.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

ENTER = "\n"
CTRL_D = "\x04"
POLL_INTERVAL = 0.1
"""Seconds between two looks for a Ctrl-C while a question waits for its key (see `TerminalKeys._wait`)."""


class Keys(Protocol):
    def discard_typeahead(self) -> None: ...

    def key(self) -> str:
        """One key press: a character, ENTER for Enter; EOFError on Ctrl-D or end of input."""
        ...

    def line(self) -> str:
        """A line typed after the prompt already shown, echoed and edited as the terminal does; Enter ends it."""
        ...


def key_or_enter(reader: Keys) -> str:
    """One key press; the end of input (Ctrl-D) answers as Enter does: the question's default, never a yes."""
    try:
        return reader.key()
    except EOFError:
        return ENTER


def line_or_nothing(reader: Keys) -> str:
    """A typed line; nothing at the end of input."""
    try:
        return reader.line()
    except EOFError:
        return ""


class TerminalKeys:
    def __init__(self, fd: int) -> None:
        self.fd = fd

    def discard_typeahead(self) -> None:
        import termios

        termios.tcflush(self.fd, termios.TCIFLUSH)

    def key(self) -> str:
        with self._cbreak():
            return self._char()

    def line(self) -> str:
        # The terminal's own line discipline edits the line (Backspace, Ctrl-U, Ctrl-W, whole UTF-8 characters)
        # and echoes it: the terminal is in its usual cooked mode between keys.
        data = b""
        while not data.endswith(b"\n"):
            self._wait()
            chunk = os.read(self.fd, 4096)
            if not chunk:
                raise EOFError
            data += chunk
        return data.decode("utf-8", errors="replace").rstrip("\r\n")

    def _char(self) -> str:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        char = ""
        while not char:  # the rest of a UTF-8 character follows its first byte
            self._wait()
            data = os.read(self.fd, 1)
            if not data or data == CTRL_D.encode():
                raise EOFError
            char = decoder.decode(data)
        return ENTER if char == "\r" else char

    def _wait(self) -> None:
        """Until the terminal has input. The wait wakes every POLL_INTERVAL: a Ctrl-C whose signal a thread not
        of ours took (threads.py) is acted on only when this, the main thread, next runs Python code."""
        import select

        while not select.select([self.fd], [], [], POLL_INTERVAL)[0]:
            pass

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
