"""The terminal chokepoint: text from the model, tools, MCP servers, files and commands is made visible, never
interpreted, before any renderer writes it to a terminal.

A terminal obeys what it is sent. An escape sequence in a command can erase the line it is on and paint another
(`ls⟨ESC⟩[2K⟨CR⟩rm -rf ~` shown as `ls`), a carriage return can overwrite a line, OSC 52 writes the clipboard,
and the bidi controls reorder what is shown. So every C0 control except tab and newline, DEL, every C1 control,
the bidi embeddings, overrides and isolates, the invisible direction marks and the line/paragraph separators are
replaced by their name in angle brackets, `⟨ESC⟩`, `⟨CR⟩`, `⟨CSI⟩`, `⟨RLO⟩`: readable, and unlike `\\x1b` not
what a command or a file plainly says. `TerminalConsole` is the rich Console the REPL and the views print
through: it applies `visible` to the text of every segment it writes, so a renderer that forgets cannot leak a
sequence; only rich's own control segments (cursor moves, styles) reach the terminal as they are. Plain writers
(`-p` progress, the approval question, error lines) call `visible` on what they did not write themselves.

What goes to the model and to json/stream-json output is data and is left as it is.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

C0_NAMES = (
    "NUL SOH STX ETX EOT ENQ ACK BEL BS HT LF VT FF CR SO SI DLE DC1 DC2 DC3 DC4 NAK SYN ETB CAN EM SUB ESC FS GS RS US"
).split()
C1_NAMES = (
    "PAD HOP BPH NBH IND NEL SSA ESA HTS HTJ VTS PLD PLU RI SS2 SS3 "
    "DCS PU1 PU2 STS CCH MW SPA EPA SOS SGCI SCI CSI ST OSC PM APC"
).split()
"""ECMA-48's names; a terminal in UTF-8 may still act on U+009B as it does on ESC [."""
INVISIBLE_NAMES = {
    "\u061c": "ALM",
    "\u200e": "LRM",
    "\u200f": "RLM",
    "\u2028": "LSEP",
    "\u2029": "PSEP",
    "\u202a": "LRE",
    "\u202b": "RLE",
    "\u202c": "PDF",
    "\u202d": "LRO",
    "\u202e": "RLO",
    "\u2066": "LRI",
    "\u2067": "RLI",
    "\u2068": "FSI",
    "\u2069": "PDI",
}
"""Bidi controls reorder what is shown (Trojan Source); direction marks and separators are invisible yet change
what a command or a file says."""

NAMES: dict[str, str] = {
    **{chr(code): C0_NAMES[code] for code in range(0x20) if chr(code) not in "\t\n"},
    "\x7f": "DEL",
    **{chr(0x80 + index): name for index, name in enumerate(C1_NAMES)},
    **INVISIBLE_NAMES,
}
"""Every character that is never written to a terminal as it is, by the name it is shown as."""
OPEN, CLOSE = "⟨", "⟩"
_TABLE = {ord(char): f"{OPEN}{name}{CLOSE}" for char, name in NAMES.items()}
_UNSAFE = re.compile("[" + "".join(re.escape(char) for char in NAMES) + "]")


def visible(text: str, *, crlf_is_newline: bool = False) -> str:
    """`text` with every control character shown by name (`⟨ESC⟩`), so writing it to a terminal does nothing
    but show it. `crlf_is_newline`: prose where CR LF is just a line ending (a command's CR is never that)."""
    if not _UNSAFE.search(text):
        return text  # the common case costs one scan
    if crlf_is_newline:
        text = text.replace("\r\n", "\n")
    return text.translate(_TABLE)


def has_controls(text: str) -> bool:
    """Whether `text` holds anything `visible` would rename: a command or change the human must be warned of."""
    return _UNSAFE.search(text) is not None


def any_controls(value: object) -> bool:
    """`has_controls` over a tool call's arguments: every string in it, keys and nested values included."""
    if isinstance(value, str):
        return has_controls(value)
    if isinstance(value, dict):
        return any(any_controls(key) or any_controls(item) for key, item in value.items())
    if isinstance(value, list | tuple):
        return any(any_controls(item) for item in value)
    return False


CONTROLS_WARNING = (
    "contains terminal control characters, shown as ⟨ESC⟩, ⟨CR⟩ …: "
    "a terminal would have shown something else than what runs"
)


class VisibleWriter:
    """A text stream whose every write passes `visible`: for views that write nothing of their own but plain
    text (no colour), so none of their lines can forget."""

    def __init__(self, stream) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        return self.stream.write(visible(text))

    def flush(self) -> None:
        self.stream.flush()


def visible_segments(segments: Iterable) -> Iterable:
    """rich segments with their text made visible; control segments (rich's own cursor moves) pass."""
    from rich.segment import Segment

    search = _UNSAFE.search
    for segment in segments:
        text, style, control = segment
        if control or not search(text):
            yield segment
        else:
            yield Segment(text.translate(_TABLE), style, control)


def terminal_console(**options):
    """A rich Console that shows control characters in what it prints instead of sending them, and leaves emoji
    codes as written: rich would turn `:warning:` in a model's, a command's or a file's text into an emoji (and
    importing its emoji table costs start-up ~3 ms)."""
    return _console_class()(**{"emoji": False, **options})


@functools.cache
def _console_class():
    from rich.console import Console

    class TerminalConsole(Console):
        """Every segment rich writes passes `visible_segments` on its way out (rich builds the output of print,
        log, Live and status in `_render_buffer`): styles, links and rich's control segments are rich's; the
        text in them is someone else's. `_render_buffer` is rich's own name (13 to 15): tests/test_terminal_text.py
        prints raw segments through this console, so a rich that renames it fails there, not silently."""

        def _render_buffer(self, buffer):
            return super()._render_buffer(visible_segments(buffer))

    return TerminalConsole
