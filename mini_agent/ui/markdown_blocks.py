"""Cutting streamed Markdown into blocks: paragraphs, headings, lists, tables and fenced code.

A blank line ends a block, except inside a fence or where an indented line continues a list item or indented
code; headings, rules and setext underlines end a block on their own line. The block in progress is kept as
pieces and never re-joined, so each delta costs what it adds.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
_HEADING = re.compile(r"^ {0,3}#{1,6}(\s|$)")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])(?:\s|$)")
_NOT_PARAGRAPH = re.compile(r"^(?:\s*(?:[-*+]|\d{1,9}[.)])(?:\s|$)|\s*[|>]| {4}|\t)")


class BlockSplitter:
    """Cuts streamed Markdown into complete blocks; keeps the block in progress as pieces, never re-joined."""

    def __init__(self) -> None:
        self._partial: list[str] = []
        self._partial_size = 0
        self._lines: list[str] = []
        self._lines_size = 0
        self._fence: tuple[str, int] | None = None
        self._fence_led = False
        self._blank = False
        self.scanned = 0

    @property
    def size(self) -> int:
        """Characters of the block in progress."""
        return self._lines_size + self._partial_size

    def feed(self, delta: str) -> list[str]:
        """Take a piece of text; return the blocks it completed, in order."""
        done: list[str] = []
        start = 0
        while (end := delta.find("\n", start)) != -1:
            self._partial.append(delta[start:end])
            line = "".join(self._partial).removesuffix("\r")
            self._partial.clear()
            self._partial_size = 0
            self.scanned += len(line)
            self._take(line, done)
            start = end + 1
        if start < len(delta):
            self._partial.append(delta[start:])
            self._partial_size += len(delta) - start
        self.scanned += len(delta)
        return done

    def finish(self) -> list[str]:
        """The end of the reply: whatever is left is a block, an unclosed fence included."""
        done: list[str] = []
        if self._partial:
            line = "".join(self._partial)
            self._partial.clear()
            self._partial_size = 0
            self._take(line, done)
        self._commit(done)
        self._fence = None
        return done

    def tail(self, limit: int) -> str:
        """The end of the block in progress: at most `limit` characters from whole lines, plus a fence's opening
        line so that code still renders as code. Costs O(limit), whatever the size of the block."""
        pieces: list[str] = []
        size = 0
        for piece in reversed(self._partial):
            pieces.append(piece)
            size += len(piece)
            if size > limit:
                break
        else:
            if self._blank and self._partial:
                pieces.append("\n")  # the blank line before the partial line: it may start a new block
                size += 1
            for line in reversed(self._lines):
                pieces.append(line + "\n")
                size += len(line) + 1
                if size > limit:
                    break
        text = "".join(reversed(pieces))
        if size <= limit:
            return text
        text = text[-limit:]
        newline = text.find("\n")
        if 0 <= newline < len(text) - 1:
            text = text[newline + 1 :]  # start on a whole line
        if self._fence is not None and self._fence_led:
            text = self._lines[0][:200] + "\n" + text
        return text

    def _take(self, line: str, done: list[str]) -> None:
        if self._fence is not None:
            self._append(line)
            if _closes(line, self._fence):
                self._fence = None
                if self._fence_led:
                    self._commit(done)
            return
        if not line.strip():
            self._blank = bool(self._lines)
            return
        if self._blank:
            self._blank = False
            if _continues(self._lines[0], line):
                self._append("")
            else:
                self._commit(done)
        in_list_item = bool(self._lines) and line[:1] in (" ", "\t") and bool(_LIST_ITEM.match(self._lines[0]))
        fence = _FENCE.match(line)
        if fence and not (fence.group(2)[0] == "`" and "`" in fence.group(3)):
            if not in_list_item:
                self._commit(done)
            self._fence_led = not self._lines
            self._fence = (fence.group(2)[0], len(fence.group(2)))
            self._append(line)
        elif in_list_item:
            self._append(line)
        elif _SETEXT.match(line) and self._lines and not _NOT_PARAGRAPH.match(self._lines[0]):
            self._append(line)  # the underline of a setext heading ends it
            self._commit(done)
        elif _HEADING.match(line) or _RULE.match(line):
            self._commit(done)
            self._append(line)
            self._commit(done)
        else:
            self._append(line)

    def _append(self, line: str) -> None:
        self._lines.append(line)
        self._lines_size += len(line) + 1

    def _commit(self, done: list[str]) -> None:
        if self._lines:
            done.append("\n".join(self._lines))
            self._lines = []
            self._lines_size = 0
        self._blank = False


def _closes(line: str, fence: tuple[str, int]) -> bool:
    stripped = line.strip()
    return len(stripped) >= fence[1] and stripped == fence[0] * len(stripped)


def _continues(first_line: str, line: str) -> bool:
    """After a blank line, an indented line still belongs to a list item or an indented code block."""
    return line[:1] in (" ", "\t") and (bool(_LIST_ITEM.match(first_line)) or first_line.startswith(("    ", "\t")))
